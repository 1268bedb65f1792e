"""Theorem 4.4 ("rich get richer"): near the origin larger singular values grow faster than
smaller ones when L > 1, amplifying initial disparities; for L = 1 relative growth rates are equal.

Source: Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.4.

Routes (L counts weight matrices, N = L + 1 factors): the balanced spectral ODE integrated by
solve_ivp (``numerics.ufm.spectral_flow``), nonlinear, against the closed-form near-origin growth
law dS/dt = N/(K sqrt n) S^(2L/(L+1)) solved by sympy (``theory.linear_regime``).

- ratio cells: from S_j(0) = S_0 (1 + spread j/(K-2)) the ratio S_max/S_min is followed up to
  0.95 T*(max S_0) for L > 1 (T* the blow-up time of the law) and, for L = 1, up to the time in
  which every mode grows ``shallow_growth``-fold (the law keeps the ratio exactly);
- leave-origin cells: from S_j = S_0 the time to reach S = level is compared with the law's
  hitting time T*(S_0) - T*(level).

The claim holds when every L > 1 ratio is amplified at least ``amplified``-fold, the L = 1 ratio
drifts by less than ``equal_rates`` (equal relative rates), and the hitting times match the law
within ``hitting_time``.  A failed integration or a run that never reaches its level is
inconclusive.  Cells use n = 2 samples per class (a generic point for the sqrt(n) in the law).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import markdown_table, save_figure, subplots
from implicitbias.numerics.ufm.spectral_flow import integrate
from implicitbias.theory.linear_regime import blowup_time, linear_solution, relative_rate
from implicitbias.theory.spectral_ode import SpectralODE

RATIO_KIND = "theorem_4_4.ratio"
LEAVE_KIND = "theorem_4_4.leave_origin"


@dataclass(frozen=True)
class Config:
    K: int = 8
    n: int = 2
    ratio_depths: tuple[int, ...] = (1, 2, 3)
    leave_depths: tuple[int, ...] = (2, 3, 4, 5)
    S0: float = 1e-4
    spread: float = 0.2
    shallow_growth: float = 100.0
    leave_S0: float = 1e-6
    points: int = 80


@dataclass(frozen=True)
class RatioRun:
    """``ratio_cell``'s config (K, L, n, smallest start ``S0``, its ``spread``, the L = 1 ``growth``,
    ``points``) and record: the times, S_max/S_min integrated and by the closed-form law, and the
    integrator's status."""

    K: int
    L: int
    n: int
    S0: float
    spread: float
    growth: float
    points: int
    times: Sequence[float]
    ratio: Sequence[float]
    ratio_closed_form: Sequence[float]
    success: bool
    message: str


@dataclass(frozen=True)
class LeaveRun:
    """``leave_origin_cell``'s config (K, L, n, start ``S0``, ``level``) and record: whether the flow
    reached the level, when (``measured``), the law's hitting time and blow-up time, the status."""

    K: int
    L: int
    n: int
    S0: float
    level: float
    reached: bool
    measured: float
    hitting_closed_form: float
    blowup_closed_form: float
    success: bool
    message: str


@dataclass(frozen=True)
class Measured:
    """Theorem 4.4's evidence: the ratio runs and the runs leaving the origin."""

    ratios: tuple[RatioRun, ...]
    leaves: tuple[LeaveRun, ...]


def ratio_cell(config: dict) -> dict:
    """Cell {"K", "L", "n", "S0", "spread", "growth", "points"} -> times, S_max/S_min integrated and closed form.

    Horizon: 0.95 T*(max S_0) for L > 1; for L = 1 the time in which the law grows every mode
    ``growth``-fold, log(growth) / (relative rate).
    """
    K, L, n = config["K"], config["L"], config["n"]
    S0 = config["S0"] * np.linspace(1.0, 1.0 + config["spread"], K - 1)
    if L > 1:
        horizon = 0.95 * float(blowup_time(S0.max(), K, L, n))
    else:
        horizon = float(np.log(config["growth"]) / relative_rate(S0.max(), K, L, n))
    times = np.linspace(0.0, horizon, config["points"])
    run = integrate(SpectralODE(K, L, n), S0, times[-1], t_eval=times)
    closed = linear_solution(S0[None, :], times[:, None], K, L, n)
    return {
        "times": times,
        "ratio": run.singular_values[:, -1] / run.singular_values[:, 0],
        "ratio_closed_form": closed[:, -1] / closed[:, 0],
        "success": run.success,
        "message": run.message,
    }


def leave_origin_cell(config: dict) -> dict:
    """Cell {"K", "L", "n", "S0", "level"} -> measured and closed-form times to reach S = level."""
    K, L, n, S0, level = config["K"], config["L"], config["n"], config["S0"], config["level"]
    run = integrate(SpectralODE(K, L, n), np.full(K - 1, S0), 1e15, margin=level / np.sqrt(n))
    return {
        "reached": run.event == "margin",
        "measured": float(run.times[-1]),
        "hitting_closed_form": float(blowup_time(S0, K, L, n) - blowup_time(level, K, L, n)),
        "blowup_closed_form": float(blowup_time(S0, K, L, n)),
        "success": run.success,
        "message": run.message,
    }


class Theorem44(TheoremCheck):
    id = "Theorem 4.4"
    statement = "near the origin larger singular values grow faster for L > 1; equal relative rates for L = 1"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), Theorem 4.4"
    section = "dynamics"
    order = 40
    thresholds = {
        "amplified": Threshold(1.5, "the law multiplies a 20% spread by > 10 at 0.95 T* for L = 2, 3; 1.5 leaves room "
                                    "for the saturation of the true flow near T*"),
        "equal_rates": Threshold(0.01, "for L = 1 the law keeps ratios exactly; the true flow's correction is "
                                       "O(g) = O(S/(K sqrt n)) <= 2e-3 while S stays below 100 S_0"),
        "hitting_time": Threshold(0.02, "the law drops g = O(S/(K sqrt n)); up to level S = 0.02 K that is a "
                                        "relative error of about 2%"),
    }
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        ratio_cfgs = [{"K": config.K, "L": L, "n": config.n, "S0": config.S0, "spread": config.spread,
                       "growth": config.shallow_growth, "points": config.points} for L in config.ratio_depths]
        ratios = ctx.map(RATIO_KIND, ratio_cell, ratio_cfgs, desc="Theorem 4.4 ratios")
        leave_cfgs = [{"K": config.K, "L": L, "n": config.n, "S0": config.leave_S0, "level": 0.02 * config.K}
                      for L in config.leave_depths]
        leaves = ctx.map(LEAVE_KIND, leave_origin_cell, leave_cfgs, desc="Theorem 4.4 hitting times")
        check = (f"integrated ODE vs closed-form growth law, K = {config.K}, n = {config.n}, ratios from "
                 f"S_0 = {config.S0:g} (spread {config.spread:g}), L = {list(config.ratio_depths)}; hitting times from "
                 f"S_0 = {config.leave_S0:g}, L = {list(config.leave_depths)}")
        return Evidence(check, Measured(tuple(RatioRun(**c, **r) for c, r in zip(ratio_cfgs, ratios)),
                                        tuple(LeaveRun(**c, **r) for c, r in zip(leave_cfgs, leaves))))

    def judge(self, evidence: Evidence) -> Verdict:
        ratios, leaves = evidence.data.ratios, evidence.data.leaves
        growth = {r.L: r.ratio[-1] / r.ratio[0] for r in ratios}
        drift = max(abs(growth[L] - 1) for L in growth if L == 1) if 1 in growth else float("nan")
        err = max(abs(r.measured / r.hitting_closed_form - 1) for r in leaves)
        measured = ("S_max/S_min grows x" + ", x".join(f"{growth[L]:.3g}" for L in sorted(growth))
                    + f" (L = {', '.join(map(str, sorted(growth)))}); hitting times within {err:.2%}")
        numbers = {"ratio_growth": {str(L): g for L, g in growth.items()}, "shallow_drift": drift,
                   "hitting_time_error": err}
        failed = [f"L = {r.L}: {r.message}" for r in ratios + leaves if not r.success]
        failed += [f"L = {r.L} never reached S = {r.level:g}" for r in leaves if not r.reached]
        if failed or 1 not in growth:
            return inconclusive("; ".join(failed) or "no L = 1 run to judge equal rates", measured, **numbers)
        problems = []
        weak = [L for L, g in growth.items() if L > 1 and g < self.threshold("amplified")]
        if weak:
            problems.append(f"ratio not amplified for L = {weak}")
        if drift > self.threshold("equal_rates"):
            problems.append(f"L = 1 ratio drifts by {drift:.1e} (rates not equal)")
        if err > self.threshold("hitting_time"):
            problems.append(f"hitting times differ from the law by {err:.1%}")
        if problems:
            return disagrees("; ".join(problems), measured, **numbers)
        return agrees(f"L > 1 amplifies ratios, L = 1 keeps them (drift {drift:.1e}), the law times the exit",
                      measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        ratios, leaves = evidence.data.ratios, evidence.data.leaves
        fig, ax = subplots(figsize=(6, 3.8))
        columns: dict[str, list] = {"L": [], "t_over_horizon": [], "ratio": [], "ratio_closed_form": []}
        for r in ratios:
            t = np.asarray(r.times) / r.times[-1]
            ax.plot(t, r.ratio, label=f"L = {r.L} (ODE)")
            ax.plot(t, r.ratio_closed_form, "k:", lw=0.8)
            columns["L"] += [r.L] * len(t)
            columns["t_over_horizon"] += list(t)
            columns["ratio"] += list(r.ratio)
            columns["ratio_closed_form"] += list(r.ratio_closed_form)
        ax.set_yscale("log")
        ax.set_xlabel(f"t / horizon (L > 1: 0.95 T*; L = 1: {ratios[0].growth:g}-fold growth)")
        ax.set_ylabel("S_max / S_min  (dotted: closed form)")
        ax.legend()
        path = save_figure(fig, ctx.path("dynamics_thm44.png"), columns)
        return "\n".join([
            f"![Theorem 4.4]({ctx.link(path)})",
            "",
            markdown_table(
                ["L", "S_0", "time to S = level (ODE)", "closed form T*(S_0) - T*(level)", "blow-up T*(S_0)"],
                [[r.L, r.S0, f"{r.measured:.4g}", f"{r.hitting_closed_form:.4g}", f"{r.blowup_closed_form:.4g}"]
                 for r in leaves],
            ),
        ])


CLAIM = Theorem44()
