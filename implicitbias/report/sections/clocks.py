"""Report section "Forgetting clocks" (Spec B): modified flows, clocks, orders, toy memory vs clock.

Everything is cached in the store: derived flows (kind ``modified_flow/v1``), the published-form
checks (``published_forms/v1``), measured orders (``order_of_accuracy/v1``) and the toy runs
(``toy_forgetting/v1``), so a second report run only redraws.
"""

from __future__ import annotations

import time

import numpy as np
import sympy as sp

from implicitbias.figures import markdown_table, plt, save_figure
from implicitbias.validation.toy_analysis import group_rows, organisation
from implicitbias.numerics.optim.order_of_accuracy import LOSSES, order_of_accuracy
from implicitbias.validation.toy import KIND, run_toy, sweep_configs
from implicitbias.report import Claim, Section, verdict
from implicitbias.theory.clocks import CLOCKS, forgetting_clocks
from implicitbias.theory.implicit_regularisers import (
    adam_one_norm_coefficient,
    gd_coefficient,
    heavy_ball_terms,
    sgd_minibatch_coefficients,
)
from implicitbias.theory.modified_flow import modified_flow
from implicitbias.theory.updates import UPDATES, builtin

NAME = "clocks"
ORDER = 30
TITLE = "Forgetting clocks"

ORDER_OPTIMIZERS = ("gd", "sgd_rr", "heavy_ball", "adam", "nesterov", "muon")
# (label, optimizer, lr, batch size, N, epochs, lambda): the source's settings and the toy's
EXAMPLE_RUNS = (
    ("CIFAR-10 low-LR SGD", "sgd", 0.01, 128, 45000, 200, 0.0),
    ("CIFAR-10 SGD + L2 1e-2", "sgd", 0.1, 128, 45000, 200, 1e-2),
    ("CIFAR-10 Adam", "adam", 1e-3, 128, 45000, 200, 0.0),
    ("CIFAR-10 Muon", "muon", 0.02, 128, 45000, 200, 0.0),
)
SWEEPS = {
    "default": dict(sigma_grid=(0.25, 0.5, 1.0, 2.5), seeds=(0, 1), epochs=20, width=64),
    "gpu": dict(sigma_grid=(0.1, 0.25, 0.5, 1.0, 1.5, 2.5), seeds=(0, 1, 2), epochs=40, width=128),
}
SWEEPS["full"] = SWEEPS["gpu"]


def flow_record(config: dict) -> dict:
    """Derive one built-in flow; the record holds its LaTeX and the derivation time."""
    t0 = time.perf_counter()
    update = builtin(config["optimizer"], minibatches=config.get("minibatches", 1))
    flow = modified_flow(update, config["order"])
    return {"latex": flow.latex(), "description": update.description, "seconds": time.perf_counter() - t0}


def forms_record(config: dict) -> dict:
    """The published-form checks, each read off a derived flow."""
    check = config["check"]
    if check == "gd":
        return {"c": str(gd_coefficient())}
    if check == "heavy_ball":
        a, c, ratio = heavy_ball_terms()
        return {"a": str(a), "c": str(c), "ratio": str(ratio)}
    if check == "sgd":
        return {f"{N},{b}": [str(x) for x in sgd_minibatch_coefficients(N, b)] for N, b in ((4, 2), (6, 2), (6, 3))}
    return {"c": str(adam_one_norm_coefficient()), "c_default": float(adam_one_norm_coefficient(0.9, 0.999))}


def order_record(config: dict) -> dict:
    return order_of_accuracy(config["optimizer"], config["loss"]).as_dict()


def toy_configs(tier: str) -> list[dict]:
    """The toy sweep of the report: every group at b = 64, low-LR SGD also at b = 32 and 128."""
    kw = SWEEPS[tier]
    return sweep_configs(batch_sizes=(64,), **kw) + sweep_configs(groups=("sgd_low",), batch_sizes=(32, 128), **kw)


def build(ctx) -> Section:
    store, prog = ctx.store, ctx.progress
    md, claims = [], []

    # 1. modified flows derived by the engine
    flow_cfgs = [{"optimizer": n, "order": 1} for n in UPDATES if n != "sgd_rr"]
    flow_cfgs += [{"optimizer": "sgd", "order": 1, "minibatches": 2}, {"optimizer": "gd", "order": 2}]
    flows = store.map("modified_flow/v1", flow_record, flow_cfgs, progress=prog, desc="modified flows")
    md += [
        "### Modified flows (backward error analysis, derived by `theory.modified_flow`)",
        "",
        "One parameter theta, generic loss L (L_1, L_2 for two minibatches), time t = k h; optimiser state "
        "on its slow manifold. Derivation time in total: "
        f"{sum(f['seconds'] for f in flows):.1f} s (cached).",
        "",
    ]
    for cfg, rec in zip(flow_cfgs, flows):
        md += [f"**{cfg['optimizer']}** (order {cfg['order']}): {rec['description']}", "", f"$$ {rec['latex']} $$", ""]

    # 2. published forms
    checks = ("gd", "heavy_ball", "sgd", "adam")
    forms = dict(zip(checks, store.map("published_forms/v1", forms_record, [{"check": c} for c in checks], progress=prog)))
    beta = sp.Symbol("beta", positive=True)
    hb_ok = sp.simplify(sp.sympify(forms["heavy_ball"]["ratio"], locals={"beta": beta}) - (1 + beta) / (1 - beta)) == 0
    sgd_ok = all(
        [sp.Rational(v) for v in forms["sgd"][f"{N},{b}"]] == [sp.Rational(1, 4), sp.Rational(N - b, 4 * b * (N - 1))]
        for N, b in ((4, 2), (6, 2), (6, 3))
    )
    claims += [
        Claim("BEA GD", "GD follows L + (h/4)|grad L|^2", "engine, generic L", f"c = {forms['gd']['c']}",
              verdict(forms["gd"]["c"] == "1/4")),
        Claim("BEA SGD", "RR mean iterate: + h(N-b)/(4b(N-1)) Gamma, ~h/b", "engine, N = 4, 6 examples, all reshuffles",
              "; ".join(f"(N,b)=({k}): {v[1]}" for k, v in forms["sgd"].items()), verdict(sgd_ok)),
        Claim("BEA heavy ball", "step h/(1-beta), regulariser x(1+beta)/(1-beta)", "engine, generic L",
              f"a = {forms['heavy_ball']['a']}, ratio = {forms['heavy_ball']['ratio']}", verdict(hb_ok)),
        Claim("BEA Adam", "default betas anti-penalise the one-norm", "engine, eps -> 0",
              f"c = {forms['adam']['c']} = {forms['adam']['c_default']:.1f} at (0.9, 0.999)",
              verdict(forms["adam"]["c_default"] < 0)),
    ]
    md += [
        "Published forms read off the derived flows: GD c = " + forms["gd"]["c"]
        + f"; heavy ball f_0 = -({forms['heavy_ball']['a']}) grad L, |grad L|^2 coefficient {forms['heavy_ball']['c']}, "
        f"ratio to GD at the same effective step {forms['heavy_ball']['ratio']}; Adam one-norm coefficient "
        f"(eps -> 0) c = {forms['adam']['c']}, i.e. beta_1/(1-beta_1) - beta_2/(1-beta_2). The reference notes "
        "quote (from memory) 1/2 + beta_1/(1-beta_1) - beta_2/(1-beta_2); the engine's 1/2 appears only in the "
        "eps-dominated part (f_1 = -(|g|'/|g|)[eps/(2(g^2+eps)) + c g^2/(g^2+eps)]); the sign for the defaults is "
        "the same (anti-penalised).",
        "",
    ]

    # 3. measured orders of accuracy
    order_cfgs = [{"optimizer": o, "loss": l} for o in ORDER_OPTIMIZERS for l in LOSSES]
    orders = store.map("order_of_accuracy/v1", order_record, order_cfgs, executor=ctx.executor, progress=prog, desc="orders")
    md += [
        "### Measured order of accuracy",
        "",
        "Global error at T = 0.5 of the iterates against the leading flow f_0 and the modified flow f_0 + h f_1 "
        "(scipy DOP853, tol 1e-12), h = 0.025 ... 0.003125; fitted log-log slopes.",
        "",
        markdown_table(
            ["optimizer", "loss", "slope vs f_0", "slope vs f_0 + h f_1", "errors vs modified flow"],
            [[r["optimizer"], r["loss"], f"{r['slope_gradient_flow']:.3f}", f"{r['slope_modified_flow']:.3f}",
              ", ".join(f"{e:.1e}" for e in r["error_modified_flow"])] for r in orders],
        ),
        "",
    ]
    main4 = [r for r in orders if r["optimizer"] in ("gd", "sgd_rr", "heavy_ball", "adam")]
    ok = all(abs(r["slope_gradient_flow"] - 1) < 0.2 and abs(r["slope_modified_flow"] - 2) < 0.2 for r in main4)
    s1 = [r["slope_gradient_flow"] for r in main4]
    s2 = [r["slope_modified_flow"] for r in main4]
    claims.append(Claim("BEA orders", "global error O(h) vs f_0, O(h^2) vs modified flow",
                        "GD, SGD-RR, heavy ball, Adam on 3 toy losses",
                        f"slopes {min(s1):.2f}-{max(s1):.2f} and {min(s2):.2f}-{max(s2):.2f}", verdict(ok)))

    # 4. the clocks of example runs
    rows = []
    for label, opt, lr, b, n, ep, lam in EXAMPLE_RUNS:
        c = forgetting_clocks(opt, lr, b, n, ep, lam)
        rows.append([label, opt, lr, b, lam, ep, *(f"{c.total[k]:.3g}" for k in CLOCKS), c.governing])
    md += ["### Clocks of example runs (constant learning rate)", "",
           markdown_table(["run", "optimizer", "lr", "b", "lambda", "epochs", *CLOCKS, "governing"], rows), ""]

    # 5. the toy classifier
    tier = ctx.tier if ctx.tier in SWEEPS else "default"
    configs = toy_configs(tier)
    records = store.map(KIND, run_toy, configs, executor=ctx.executor, progress=prog, desc="toy forgetting")
    groups = group_rows(list(zip(configs, records)))
    org = organisation(groups)
    md += _toy_markdown(ctx, configs, records, groups, org, tier)
    claims += _toy_claims(groups, org, tier)
    return Section(TITLE, "\n".join(md), claims)


def _toy_markdown(ctx, configs, records, groups, org, tier) -> list[str]:
    fig, axes = plt.subplots(1, 4, figsize=(17, 3.8))
    colors = {"T_SGD": "tab:blue", "T_L2": "tab:green", "T_adapt": "tab:red"}
    for ax, clock in zip(axes, CLOCKS):
        for r in groups:
            x = max(r[clock], 1e-6)
            ax.errorbar(x, r["spread"], yerr=r["spread_std"], fmt="o", color=colors[r["governing"]])
            ax.annotate(r["label"], (x, r["spread"]), fontsize=6, xytext=(3, 3), textcoords="offset points")
        ax.set_xscale("log")
        ax.set_xlabel(f"{clock} (0 plotted at 1e-6)")
        ax.set_title(f"spread vs {clock}")
    x, fit = np.array(org["log10_governing_clock"]), np.array(org["monotone_fit"])
    for r, xi in zip(groups, x):
        axes[3].plot(xi, r["spread"], "o", color=colors[r["governing"]])
    order = np.argsort(x)
    axes[3].step(x[order], fit[order], where="post", color="k", label="isotonic fit")
    axes[3].set_xlabel("log10 of the governing clock")
    axes[3].set_title(f"monotone law, Spearman {_fmt(org['governing_spearman'])}")
    axes[0].set_ylabel("test-accuracy spread across sigma_w")
    for c, col in colors.items():
        axes[3].plot([], [], "o", color=col, label=f"governed by {c}")
    axes[3].legend(fontsize=7)
    cols = {k: [r[k] for r in groups] for k in ("label", "governing", "spread", "spread_std", "norm_slope", *CLOCKS)}
    cols["log10_governing_clock"], cols["monotone_fit"] = x.tolist(), fit.tolist()
    spread_png = save_figure(fig, ctx.path("clocks_spread_vs_clock.png"), cols)

    fig, ax = plt.subplots(figsize=(5.5, 4))
    norm_cols = {"label": [], "sigma_w": [], "final_norm": []}
    for r in groups:
        pts = sorted(
            (c["sigma_w"], rec["summary"]["final_kernel_norm"])
            for c, rec in zip(configs, records)
            if f"{c['group']} b={c['batch_size']}" == r["label"]
        )
        s = sorted({p[0] for p in pts})
        mean = [np.mean([n for q, n in pts if q == v]) for v in s]
        ax.loglog(s, mean, "o-", label=f"{r['label']} (slope {r['norm_slope']:.2f})")
        norm_cols["label"] += [r["label"]] * len(s)
        norm_cols["sigma_w"] += s
        norm_cols["final_norm"] += mean
    ax.set_xlabel("sigma_w")
    ax.set_ylabel("final total kernel norm")
    ax.legend(fontsize=6)
    norm_png = save_figure(fig, ctx.path("clocks_final_norm_vs_sigma.png"), norm_cols)

    sp_rows = [[c, _fmt(v["all"]), _fmt(v["family"]), v["family_size"]] for c, v in org["spearman"].items()]
    return [
        "### Initialisation memory of a scale-invariant toy classifier",
        "",
        f"BatchNorm MLP on MNIST-1D (`validation.toy`), tier `{tier}`: sigma_w in "
        f"{SWEEPS[tier]['sigma_grid']}, seeds {SWEEPS[tier]['seeds']}, {SWEEPS[tier]['epochs']} epochs, width "
        f"{SWEEPS[tier]['width']}; spread = best minus worst validation-selected test accuracy across sigma_w "
        "(mean and std over seeds); slope = d log(final kernel norm) / d log sigma_w.",
        "",
        markdown_table(
            ["group", "lr", "lambda", "spread", "norm slope", "interpolated", *CLOCKS, "governing"],
            [[r["label"], r["lr"], r["weight_decay"], f"{r['spread']:.3f} ± {r['spread_std']:.3f}",
              f"{r['norm_slope']:.2f} ± {r['norm_slope_std']:.2f}", f"{r['interpolated']:.0%}",
              *(f"{r[c]:.3g}" for c in CLOCKS), r["governing"]] for r in groups],
        ),
        "",
        f"![spread vs clock]({ctx.link(spread_png)})",
        "",
        f"![final norm vs sigma_w]({ctx.link(norm_png)})",
        "",
        "Spearman rank correlation of spread against each clock (all groups; the family of groups that clock "
        "governs). Negative = a larger clock goes with a smaller spread.",
        "",
        markdown_table(["clock", "all groups", "its family", "family size"], sp_rows),
        "",
        f"Interpolation (train accuracy >= 99.5%) was reached by {sum(r['interpolated'] for r in groups) / len(groups):.0%} "
        "of the runs. Where low-LR SGD does not interpolate, its memory shows as large-sigma_w runs that barely "
        "train (a BatchNorm kernel's effective step is eta / rho^2, and rho ~ sigma_w), the form of claim C6, not "
        "C1's interpolating runs with different test accuracy; C1 is then marked inconclusive.",
        "",
        f"Monotone (isotonic, non-increasing) law of spread against log10 of each group's governing clock: "
        f"Spearman {_fmt(org['governing_spearman'])}; groups the law misses by > 0.05: "
        f"{', '.join(org['misses']) or 'none'}. Known limits: the clocks carry no momentum prefactor (heavy ball's "
        "effective step is lr/(1-beta), so its T_SGD is understated by (1-beta)^-2), and the three clocks have "
        "different units, so groups governed by different clocks are ordered only within a family.",
        "",
    ]


def _toy_claims(groups, org, tier) -> list[Claim]:
    g = {r["label"]: r for r in groups}
    low, check = g["sgd_low b=64"], f"BN-MLP on MNIST-1D, tier {tier}"
    adaptive = [g[k] for k in ("adam b=64", "adamw b=64", "muon b=64")]
    forgetters = [g["sgd_high b=64"], g["sgd_l2 b=64"]]
    c1 = ("agrees" if low["interpolated"] == 1 else "inconclusive") if low["spread"] > 0.08 and low["norm_slope"] > 0.8 else "disagrees"
    c3 = all(r["spread"] < low["spread"] - 0.08 and r["norm_slope"] < 0.3 for r in adaptive)
    c4 = all(r["spread"] < low["spread"] - 0.08 for r in forgetters)
    lows = sorted((r["batch_size"], r["spread"], r["spread_std"]) for r in groups if r["label"].startswith("sgd_low"))
    batches = [(b, s) for b, s, _ in lows]
    if all(a[1] < b[1] for a, b in zip(batches, batches[1:])):
        c5 = "agrees"
    else:  # a reversal smaller than twice the seed scatter is not evidence either way
        spreads = [s for _, s in batches]
        c5 = "inconclusive" if max(spreads) - min(spreads) < 2 * max(sd for *_, sd in lows) else "disagrees"
    rho = org["governing_spearman"]
    return [
        Claim("C1", "low-LR SGD remembers sigma_w (interpolating)", check,
              f"spread {low['spread']:.3f}, norm slope {low['norm_slope']:.2f}, interpolated {low['interpolated']:.0%}", c1),
        Claim("C2", "5,000 epochs leave the spread unchanged", "long horizon not run at CPU size", "-", "not run"),
        Claim("C3", "Adam, AdamW, Muon forget (small spread, common norm)", check,
              "; ".join(f"{r['label']}: {r['spread']:.3f}, slope {r['norm_slope']:.2f}" for r in adaptive),
              verdict(c3)),
        Claim("C4", "SGD forgets with a larger LR or L2 decay", check,
              "; ".join(f"{r['label']}: {r['spread']:.3f}, slope {r['norm_slope']:.2f}" for r in forgetters),
              verdict(c4)),
        Claim("C5", "larger batches keep a larger spread", check + ", low-LR SGD b = 32, 64, 128",
              ", ".join(f"b={b}: {s:.3f}" for b, s in batches), c5),
        Claim("C7", "cumulative clocks order the spreads", check + ", spread vs governing clock",
              f"Spearman {_fmt(rho)}; misses: {', '.join(org['misses']) or 'none'}",
              "agrees" if rho is not None and rho <= -0.5 else "inconclusive"),
    ]


def _fmt(x) -> str:
    return "n/a" if x is None else f"{x:.2f}"
