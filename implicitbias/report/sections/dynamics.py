"""Report section: singular-value dynamics of the deep UFM (Spec A, sections 4 and 5).

Claims checked: the Hadamard diagonalisation, the derived ODE against the full-matrix flow,
Theorems 4.3, 4.4 and 4.5, the KL divergence to NC, the basin of NC, and the section-5 trend of
the effective rank with depth and width.  Every number comes from a store cell, so a second run
only redraws.  L counts weight matrices; N = L + 1 factors including the features.
"""

from __future__ import annotations

import numpy as np

from implicitbias.claims.basin import basin_configs, basin_figure
from implicitbias.claims.kl_to_nc import trajectory_configs, trajectory_figure
from implicitbias.figures import markdown_table, plt, save_figure
from implicitbias.numerics.ufm.basin import basin_cell
from implicitbias.numerics.ufm.depth_rank import trained_rank
from implicitbias.numerics.ufm.etf_alignment import fit_exponent, velocity_alignment
from implicitbias.numerics.ufm.rich_get_richer import leave_origin_cell, ratio_cell
from implicitbias.numerics.ufm.spectral_agreement import spectral_vs_full
from implicitbias.numerics.ufm.spectral_flow import trajectory_record
from implicitbias.report import Claim, Section, verdict
from implicitbias.theory.hadamard import softmax_dyadic_proof
from implicitbias.theory.spectral_ode import per_mode_matches_loss, per_mode_system

NAME = "dynamics"
ORDER = 20
VERIFY = True
TITLE = "Singular-value dynamics of the deep UFM (Theorems 4.3-4.5, section 5)"


def _symbolic(config: dict) -> dict:
    if config["what"] == "dyadic":
        return {"holds": softmax_dyadic_proof(config["K"]).holds}
    return {"holds": per_mode_matches_loss(config["K"], config["L"])}


def _map(ctx, kind, fn, configs, parallel=True):
    return ctx.store.map(kind, fn, configs, executor=ctx.executor if parallel else None, progress=ctx.progress)


def _hadamard_and_ode(ctx) -> tuple[str, list[Claim]]:
    symbolic = [
        {"what": "dyadic", "K": 4},
        {"what": "dyadic", "K": 8},
        {"what": "ode", "K": 4, "L": 2},
        {"what": "ode", "K": 8, "L": 1},
    ]
    proofs = _map(ctx, "dynamics.symbolic", _symbolic, symbolic)
    cases = [(8, 2)] + ([(4, 1), (16, 4)] if ctx.tier != "default" else [])
    configs = [
        {"K": K, "L": L, "d": K, "n": 2, "seed": 0, "log_scale": 0.3, "margin": 5.0, "points": 12, "rtol": 1e-11}
        for K, L in cases
    ]
    flows = _map(ctx, "dynamics.flow_check", spectral_vs_full, configs, parallel=False)
    worst = max(r["max_rel_error"] for r in flows)
    off = max(max(r["max_off_diagonal_logits"], r["max_off_diagonal_factors"]) for r in flows)
    ok_flow = worst < 1e-6 and off < 1e-10 and all(r["reached_margin"] for r in flows)
    unbalanced, balanced = per_mode_system(2), per_mode_system(2, balanced=True)
    text = "\n".join(
        [
            "Derived with sympy from the mean cross-entropy of the Hadamard-structured deep UFM "
            "(shown for L = 2; `implicitbias.theory.spectral_ode`), with g_j = <chi_j, softmax(z/sqrt n)>:",
            "",
            f"$$ {unbalanced.latex} $$",
            "",
            f"balanced reduction: $$ {balanced.latex} $$",
            "",
            markdown_table(
                [
                    "K",
                    "L",
                    "flow time to margin 5",
                    "max rel. error of S_j",
                    "max off-diagonal mass",
                    "spectral s",
                    "full-matrix s",
                ],
                [
                    [
                        c["K"],
                        c["L"],
                        f"{r['T']:.3g}",
                        f"{r['max_rel_error']:.1e}",
                        f"{max(r['max_off_diagonal_logits'], r['max_off_diagonal_factors']):.1e}",
                        f"{r['spectral_seconds']:.2f}",
                        f"{r['full_seconds']:.2f}",
                    ]
                    for c, r in zip(configs, flows)
                ],
            ),
        ]
    )
    claims = [
        Claim(
            "Hadamard diagonalisation (s. 4)",
            "column softmax of a dyadic logit matrix is dyadic, so the CE gradient is diagonal in Q",
            "exact sympy proof for K = 4 and 8",
            "holds" if all(p["holds"] for p in proofs[:2]) else "fails",
            verdict(all(p["holds"] for p in proofs[:2])),
        ),
        Claim(
            "Singular-value ODE (s. 4)",
            "Hadamard init freezes singular vectors; singular values follow the derived ODE",
            f"sympy derivative of the loss = per-mode system (K, L) = (4, 2), (8, 1); full-matrix flow vs ODE, (K, L) in {cases}, to margin 5",
            f"max rel. error {worst:.1e}, off-diagonal mass {off:.1e}",
            verdict(ok_flow and all(p["holds"] for p in proofs[2:])),
        ),
    ]
    return text, claims


def _theorem_4_4(ctx) -> tuple[str, list[Claim]]:
    K = 8
    ratio_configs = [{"K": K, "L": L, "n": 1, "S0": 1e-4, "spread": 0.2, "points": 80} for L in (1, 2, 3)]
    ratios = _map(ctx, "dynamics.ratio", ratio_cell, ratio_configs)
    leave_configs = [{"K": K, "L": L, "n": 1, "S0": 1e-6, "level": 0.02 * K} for L in (2, 3, 4, 5)]
    leaves = _map(ctx, "dynamics.leave_origin", leave_origin_cell, leave_configs)
    fig, ax = plt.subplots(figsize=(6, 3.8))
    columns: dict[str, list] = {"L": [], "t_over_horizon": [], "ratio": [], "ratio_closed_form": []}
    for c, r in zip(ratio_configs, ratios):
        t = np.asarray(r["times"]) / r["times"][-1]
        ax.plot(t, r["ratio"], label=f"L = {c['L']} (ODE)")
        ax.plot(t, r["ratio_closed_form"], "k:", lw=0.8)
        columns["L"] += [c["L"]] * len(t)
        columns["t_over_horizon"] += list(t)
        columns["ratio"] += list(r["ratio"])
        columns["ratio_closed_form"] += [float(x) for x in r["ratio_closed_form"]]
    ax.set_yscale("log")
    ax.set_xlabel("t / (0.95 T*)  (L = 1: time for 10^4-fold growth)")
    ax.set_ylabel("S_max / S_min  (dotted: closed form)")
    ax.legend()
    path = save_figure(fig, ctx.path("dynamics_thm44.png"), columns)
    err = max(abs(r["measured"] / r["hitting_closed_form"] - 1) for r in leaves)
    amplified = all(r["ratio"][-1] > 1.5 * r["ratio"][0] for c, r in zip(ratio_configs, ratios) if c["L"] > 1)
    text = "\n".join(
        [
            f"![Theorem 4.4]({ctx.link(path)})",
            "",
            markdown_table(
                ["L", "S_0", "time to S = 0.16 (ODE)", "closed form T*(S_0) - T*(0.16)", "blow-up T*(S_0)"],
                [
                    [
                        c["L"],
                        c["S0"],
                        f"{r['measured']:.4g}",
                        f"{r['hitting_closed_form']:.4g}",
                        f"{r['blowup_closed_form']:.4g}",
                    ]
                    for c, r in zip(leave_configs, leaves)
                ],
            ),
        ]
    )
    claim = Claim(
        "Theorem 4.4",
        "near the origin larger singular values grow faster for L > 1 (equal rates for L = 1)",
        "integrated ODE vs closed-form growth law, K = 8, S_0 = 1e-4 (ratios) and 1e-6 (blow-up), L = 1..5",
        "S_max/S_min 1.2 -> "
        + ", ".join(f"{r['ratio'][-1]:.2f}" for r in ratios)
        + f" (L = 1, 2, 3); hitting times within {err:.2%}",
        verdict(amplified and err < 0.02),
    )
    return text, [claim]


def _kl_and_trajectories(ctx) -> tuple[str, list[Claim]]:
    configs = trajectory_configs(8, [1, 2, 3, 4], 1, 1e-3, 0.3, 0, 20.0, 1e8)
    records = _map(ctx, "dynamics.trajectory", trajectory_record, configs)
    path = trajectory_figure(ctx.path("dynamics_trajectory.png"), configs, records)
    shallow = np.asarray(records[0]["kl"])
    rise = float(np.max(np.diff(shallow)))
    deep = [np.asarray(r["kl"]) for r in records[2:]]
    grows = all(k[-1] > 10 * max(k[0], 1e-3) and np.all(np.diff(k[-len(k) // 3 :]) > 0) for k in deep)
    text = "\n".join(
        [
            "KL divergence to NC used here: KL(uniform || S / sum S) over the K - 1 active modes "
            "(`implicitbias.numerics.metrics.kl_to_nc`); zero at NC, infinite when a mode vanishes.",
            "",
            f"![trajectories]({ctx.link(path)})",
        ]
    )
    claim = Claim(
        "KL to NC (s. 4)",
        "Lyapunov for L = 1; can diverge for deep models",
        "balanced flow, K = 8, S_j(0) = 1e-3 exp(0.3 xi_j), L = 1..4 to margin 20 (plus hypothesis tests)",
        f"L = 1 largest KL increase {rise:.1e}; final KL for L = 3, 4: {', '.join(f'{k[-1]:.2f}' for k in deep)} and rising",
        verdict(rise <= 1e-9 and grows),
    )
    return text, [claim]


def _basin(ctx) -> tuple[str, list[Claim]]:
    seeds = 2 if ctx.tier == "default" else 6
    configs = basin_configs(8, [1, 2, 3, 4], 1, [1e-3, 1e-2, 1e-1, 1.0], [0.1, 0.3, 0.6], seeds, 20.0, 1e8)
    records = _map(ctx, "dynamics.basin", basin_cell, configs)
    path, summary = basin_figure(ctx.path("dynamics_basin.png"), configs, records)
    overall = [summary["overall"][L] for L in sorted(summary["overall"])]
    ok = overall[0] == 1.0 and np.all(np.diff(overall) <= 0) and overall[-1] < overall[0]
    text = "\n".join(
        [
            f"![basin]({ctx.link(path)})",
            "",
            markdown_table(
                ["L", "fraction of starts ending at NC"],
                [[L, f"{f:.3f}"] for L, f in sorted(summary["overall"].items())],
            ),
        ]
    )
    claim = Claim(
        "Basin of NC (s. 4)",
        "depth shrinks the basin of attraction of NC",
        f"K = 8, S_j(0) = scale exp(eps xi_j), 4 scales x 3 eps x {seeds} seeds, balanced flow to margin 20",
        "fraction at NC for L = 1..4: " + ", ".join(f"{f:.2f}" for f in overall),
        verdict(bool(ok)),
    )
    return text, [claim]


def _theorem_4_5(ctx) -> tuple[str, list[Claim]]:
    widths = [16, 64, 256, 1024] if ctx.tier == "default" else [16, 32, 64, 128, 256, 512, 1024]
    seeds = range(3)
    width_configs = [{"K": 4, "L": 2, "d": d, "n": 2, "scale": 0.1, "seed": s} for d in widths for s in seeds]
    depth_configs = [{"K": 4, "L": L, "d": 64, "n": 2, "scale": 0.1, "seed": s} for L in range(1, 7) for s in seeds]
    recs = _map(ctx, "dynamics.alignment", velocity_alignment, width_configs + depth_configs)
    by_width = recs[: len(width_configs)]
    by_depth = recs[len(width_configs) :]
    cos_w = [np.mean([r["cosine"] for c, r in zip(width_configs, by_width) if c["d"] == d]) for d in widths]
    gap_w = [np.mean([r["gap"] for c, r in zip(width_configs, by_width) if c["d"] == d]) for d in widths]
    cos_l = [np.mean([r["cosine"] for c, r in zip(depth_configs, by_depth) if c["L"] == L]) for L in range(1, 7)]
    beta, C = fit_exponent(widths, gap_w)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.8))
    ax1.loglog(widths, gap_w, "o-", label="gap = ||v/|v| - E/|E|||")
    ax1.loglog(widths, C * np.asarray(widths, dtype=float) ** beta, "k:", label=f"fit d^{beta:.2f}")
    ax1.set_xlabel("width d (L = 2, K = 4, n = 2, scale 0.1)")
    ax1.set_ylabel("gap to the ETF direction")
    ax1.legend()
    ax2.plot(range(1, 7), cos_l, "o-")
    ax2.set_xlabel("depth L (d = 64)")
    ax2.set_ylabel("cos(dZ/dt(0), S kron 1_n^T)")
    columns = {
        "panel": ["width"] * len(widths) + ["depth"] * 6,
        "x": widths + list(range(1, 7)),
        "cosine": cos_w + cos_l,
        "gap": gap_w + [float("nan")] * 6,
    }
    path = save_figure(fig, ctx.path("dynamics_thm45.png"), columns)
    ok = bool(np.all(np.diff(cos_w) > 0) and np.all(np.diff(cos_l) < 0) and -0.65 < beta < -0.35)
    text = "\n".join(
        [
            f"![Theorem 4.5]({ctx.link(path)})",
            "",
            markdown_table(["d", *widths], [["mean cosine", *[f"{c:.4f}" for c in cos_w]]]),
            "",
            markdown_table(["L", *range(1, 7)], [["mean cosine (d = 64)", *[f"{c:.4f}" for c in cos_l]]]),
        ]
    )
    claim = Claim(
        "Theorem 4.5",
        "wide random init: dZ/dt(0) aligns with the simplex ETF",
        f"torch JVP of the logits, Gaussian init var scale^2/d, K = 4, L = 2, d = {widths[0]}..{widths[-1]}, 3 seeds; L = 1..6 at d = 64",
        f"cosine {cos_w[0]:.3f} -> {cos_w[-1]:.4f}; gap exponent {beta:.2f} (1 - cos ~ d^{2 * beta:.2f}); cosine falls with depth {cos_l[0]:.3f} -> {cos_l[-1]:.3f}",
        verdict(ok),
    )
    return text, [claim]


def _section_5(ctx) -> tuple[str, list[Claim]]:
    if ctx.tier == "default":
        depths, widths, seeds, steps = [1, 3, 6], [16, 64], range(2), 1500
    else:
        depths, widths, seeds, steps = [1, 2, 3, 4, 5, 6], [16, 32, 64, 128, 256], range(3), 2000
    configs = [
        {"K": 10, "L": L, "d": d, "n": 1, "scale": 1.0, "lr": 0.2, "steps": steps, "seed": s}
        for L in depths
        for d in widths
        for s in seeds
    ]
    recs = _map(ctx, "dynamics.depth_rank", trained_rank, configs)
    grid = np.full((len(depths), len(widths)), np.nan)
    for i, L in enumerate(depths):
        for j, d in enumerate(widths):
            vals = [
                r["roy_vetterli"] for c, r in zip(configs, recs) if c["L"] == L and c["d"] == d and not r["diverged"]
            ]
            grid[i, j] = np.mean(vals) if vals else np.nan
    fig, ax = plt.subplots(figsize=(6, 3.8))
    columns: dict[str, list] = {"d": [], "L": [], "effective_rank": []}
    for j, d in enumerate(widths):
        ax.plot(depths, grid[:, j], "o-", label=f"d = {d}")
        columns["d"] += [d] * len(depths)
        columns["L"] += depths
        columns["effective_rank"] += list(grid[:, j])
    ax.set_xlabel("depth L")
    ax.set_ylabel("effective rank of mean logits (Roy-Vetterli)")
    ax.set_title(f"Deep UFM, K = 10, GD lr 0.2, {steps} steps, {len(seeds)} seeds")
    ax.legend()
    path = save_figure(fig, ctx.path("dynamics_section5.png"), columns)
    ok = bool(np.all(np.diff(grid, axis=0) < 0) and np.all(np.diff(grid, axis=1) > 0))
    text = "\n".join(
        [
            f"![section 5]({ctx.link(path)})",
            "",
            markdown_table(["L \\ d", *widths], [[L, *[f"{v:.2f}" for v in grid[i]]] for i, L in enumerate(depths)]),
            "",
            f"NC1-NC4 (Papyan et al.; `implicitbias.numerics.metrics.nc_metrics`) of the last hidden features, d = {widths[-1]}, "
            "mean over seeds (n = 1 sample per class, so NC1 = 0 by construction; NC2/NC3 grow with depth as the "
            "means leave the simplex ETF):",
            "",
            markdown_table(
                ["L", *NC_KEYS], [[L, *[f"{v:.3g}" for v in _mean_nc(configs, recs, L, widths[-1])]] for L in depths]
            ),
        ]
    )
    claim = Claim(
        "Section 5 (deep UFM)",
        "effective rank of the mean logits falls with depth, rises with width",
        f"GD from Gaussian init, no regularisation, K = 10, L in {depths}, d in {widths}, {len(seeds)} seeds",
        f"rank {grid[0, 0]:.2f} (L = {depths[0]}, d = {widths[0]}) ... {grid[-1, 0]:.2f} (L = {depths[-1]}); {grid[-1, -1]:.2f} at d = {widths[-1]}",
        verdict(ok),
    )
    return text, [claim]


NC_KEYS = ["nc1", "nc2", "nc3", "nc4_agreement"]


def _mean_nc(configs, recs, L, d) -> list[float]:
    rows = [r for c, r in zip(configs, recs) if c["L"] == L and c["d"] == d and not r["diverged"]]
    return [float(np.mean([r[k] for r in rows])) if rows else float("nan") for k in NC_KEYS]


def build(ctx) -> Section:
    parts, claims = [], []
    for heading, part in [
        ("Hadamard structure and the derived ODE", _hadamard_and_ode),
        ("Theorem 4.4: rich get richer", _theorem_4_4),
        ("Trajectories and the KL divergence to NC", _kl_and_trajectories),
        ("Basin of attraction of NC", _basin),
        ("Theorem 4.5: wide random init aligns with the ETF", _theorem_4_5),
        ("Section 5: effective rank vs depth and width (deep UFM)", _section_5),
    ]:
        text, found = part(ctx)
        parts += [f"### {heading}", "", text, ""]
        claims += found
    return Section(TITLE, "\n".join(parts), claims)
