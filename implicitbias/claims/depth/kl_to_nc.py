"""KL divergence to NC (Spec A, section 4): a Lyapunov function of the shallow model that can
diverge in deep ones: trajectories may leave NC entirely.

Source: Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4.  The divergence is
not stated by the source; ours is KL(uniform || S / sum S) over the K - 1 active modes
(``numerics.metrics.kl_to_nc``): zero at NC, infinite when a mode vanishes.

Cells: the balanced spectral ODE (``numerics.ufm.spectral_flow``; L counts weight matrices,
N = L + 1 factors) from one perturbed-NC start S_j(0) = scale exp(eps xi_j), one trajectory per
depth, sampled on a log time grid up to the margin ``margin``.  The trajectory configs and figure
are shared with ``implicitbias dynamics trajectory``.

The claim holds when the L = 1 KL never rises by more than ``lyapunov`` between samples and for
every depth L >= ``deep_from`` the KL ends ``diverges``-fold above its start (floored at
``kl_floor``) and still rising over the last ``rising_tail`` of the samples.  A failed integration is
inconclusive.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from matplotlib import colormaps

from implicitbias.claims import Evidence, Threshold, Verdict, agrees, disagrees, inconclusive
from implicitbias.claims.depth import TheoremCheck
from implicitbias.figures import save_figure, subplots
from implicitbias.numerics.ufm.spectral_flow import integrate, perturbed_nc
from implicitbias.theory import params
from implicitbias.theory.spectral_ode import SpectralODE

KIND = "dynamics.trajectory"  # shared with `implicitbias dynamics trajectory`


def trajectory_configs(
    K: int, depths, n: int, scale: float, eps: float, seed: int, margin: float, t_end: float
) -> list[dict]:
    """Validated configs of ``trajectory_record`` cells, one per depth (L counts weight matrices)."""
    for L in depths:
        SpectralODE(K, L, n)  # validates K (power of two), L >= 1, n
    params.real("scale", scale, minimum=0, open_minimum=True)
    params.real("eps", eps, minimum=0)
    params.real("margin", margin, minimum=0, open_minimum=True)
    params.real("t_end", t_end, minimum=0, open_minimum=True)
    return [
        {
            "K": K,
            "L": L,
            "n": n,
            "scale": scale,
            "eps": eps,
            "seed": seed,
            "margin": margin,
            "t_end": t_end,
            "points": 160,
        }
        for L in depths
    ]


@dataclass(frozen=True)
class FlowStart:
    """A balanced flow from a perturbed NC spectrum S_j(0) = scale exp(eps xi_j) (``perturbed_nc``):
    K classes, depth L (weight matrices), n samples per class, the start's ``scale``, ``eps`` and
    ``seed``, and the horizon ``t_end``."""

    K: int
    L: int
    n: int
    scale: float
    eps: float
    seed: int
    t_end: float


@dataclass(frozen=True)
class Trajectory(FlowStart):
    """One ``trajectory_record`` run with its config (``FlowStart`` and the ``points`` sampled): the
    samples (times, singular values T x (K - 1), margin, effective rank, KL to NC), the event that
    stopped it (None: t_end) and solve_ivp's ``success`` and ``message`` (the record's margin
    samples replace the config's target)."""

    points: int
    times: Sequence[float]
    singular_values: Sequence[Sequence[float]]
    margin: Sequence[float]
    effective_rank: Sequence[float]
    kl: Sequence[float]
    event: str | None
    success: bool
    message: str


@dataclass(frozen=True)
class Measured:
    """The claim's evidence: one ``Trajectory`` per depth, and the smallest depth called deep."""

    runs: tuple[Trajectory, ...]
    deep_from: int


def trajectories(configs: list[dict], records: list[dict]) -> tuple[Trajectory, ...]:
    """``trajectory_record``'s configs and records as ``Trajectory``s."""
    return tuple(Trajectory(**{**c, **r}) for c, r in zip(configs, records))


def trajectory_figure(path: Path, runs: Sequence[Trajectory]) -> Path:
    """2 x 2 panels against time: normalised singular values, effective rank, KL to NC, margin."""
    fig, axes = subplots(2, 2, figsize=(10, 7), sharex=True)
    columns: dict[str, list] = {"L": [], "t": [], "margin": [], "effective_rank": [], "kl_to_nc": [], "S_min/S_max": []}
    colours = colormaps["viridis"](np.linspace(0, 0.9, len(runs)))
    for run, colour in zip(runs, colours):
        t = np.asarray(run.times)
        S = np.asarray(run.singular_values)
        label = f"L = {run.L}"
        axes[0, 0].plot(t, S / S.max(axis=1, keepdims=True), color=colour, lw=0.8)
        axes[0, 1].plot(t, run.effective_rank, color=colour, label=label)
        axes[1, 0].plot(t, run.kl, color=colour, label=label)
        axes[1, 1].plot(t, run.margin, color=colour, label=label)
        columns["L"] += [run.L] * len(t)
        columns["t"] += list(t)
        columns["margin"] += list(run.margin)
        columns["effective_rank"] += list(run.effective_rank)
        columns["kl_to_nc"] += list(run.kl)
        columns["S_min/S_max"] += list(S.min(axis=1) / S.max(axis=1))
    K = runs[0].K
    axes[0, 0].set_ylabel("S_j / max S (all modes)")
    axes[0, 1].set_ylabel("effective rank (Roy-Vetterli)")
    axes[0, 1].axhline(K - 1, color="grey", ls=":", lw=0.8)
    axes[1, 0].set_ylabel("KL(uniform || S / sum S)")
    axes[1, 1].set_ylabel("margin")
    axes[1, 1].set_yscale("log")
    for ax in axes.ravel():
        ax.set_xscale("log")
    for ax in axes[1]:
        ax.set_xlabel("time t (gradient-flow clock)")
    axes[0, 1].legend()
    fig.suptitle(
        f"Balanced Hadamard flow, K = {K}, start S_j = {runs[0].scale:g} exp({runs[0].eps:g} xi_j)"
    )
    return save_figure(fig, path, columns)


def trajectory_record(config: dict) -> dict:
    """Cell: balanced flow from a perturbed-NC start, sampled on a log time grid (for figures).

    config: {"K", "L", "n", "scale", "eps", "seed", "margin", "t_end", "points"}; the start is
    ``perturbed_nc(K, scale, eps, seed)``.  L counts weight matrices (N = L + 1 factors).
    Returns lists: times, singular values (T x (K-1)), margin, effective rank, KL to NC, event,
    and solve_ivp's success and message.
    """
    system = SpectralODE(config["K"], config["L"], config["n"], balanced=True)
    start = perturbed_nc(config["K"], config["scale"], config["eps"], config["seed"])
    times = np.geomspace(1e-3, config["t_end"], config["points"])
    run = integrate(system, start, config["t_end"], t_eval=times, margin=config["margin"], rtol=1e-9, atol=1e-11)
    return {
        "times": run.times,
        "singular_values": run.singular_values,
        "margin": run.margin,
        "effective_rank": run.effective_rank,
        "kl": run.kl,
        "event": run.event,
        "success": run.success,
        "message": run.message,
    }


@dataclass(frozen=True)
class Config:
    K: int = 8
    depths: tuple[int, ...] = (1, 2, 3, 4)
    n: int = 1
    scale: float = 1e-3
    eps: float = 0.3
    seed: int = 0
    margin: float = 20.0
    t_end: float = 1e8
    deep_from: int = 3


class KLToNC(TheoremCheck):
    id = "KL to NC (s. 4)"
    statement = "KL divergence to NC is a Lyapunov function for L = 1 and can diverge for deep models"
    source = "Spec A s. 4; Garrod, Keating, Thrampoulidis (ICML 2026), section 4 (divergence: ours)"
    section = "dynamics"
    order = 50
    thresholds = {
        "lyapunov": Threshold(1e-9, "the trajectories are integrated at rtol 1e-9: a larger rise is not rounding"),
        "diverges": Threshold(10.0, "an order of magnitude above the start, at the end of a run to margin 20 where "
                                    "the shallow KL has fallen by orders of magnitude"),
        "kl_floor": Threshold(1e-3, "starts closer to NC than this would make any growth look like divergence"),
        "rising_tail": Threshold(1 / 3, "fraction of the (log-spaced) samples at the end over which a diverging KL "
                                        "must still rise: the late, large-margin regime"),
    }
    configs = {"default": Config()}

    def measure(self, ctx, config: Config) -> Evidence:
        configs = trajectory_configs(config.K, list(config.depths), config.n, config.scale, config.eps, config.seed,
                                     config.margin, config.t_end)
        records = ctx.map(KIND, trajectory_record, configs, desc="KL trajectories")
        check = (f"balanced flow, K = {config.K}, S_j(0) = {config.scale:g} exp({config.eps:g} xi_j), "
                 f"L = {list(config.depths)} to margin {config.margin:g}; deep means L >= {config.deep_from}")
        return Evidence(check, Measured(trajectories(configs, records), config.deep_from))

    def judge(self, evidence: Evidence) -> Verdict:
        runs, deep_from = evidence.data.runs, evidence.data.deep_from
        shallow = [np.asarray(r.kl) for r in runs if r.L == 1]
        deep = {r.L: np.asarray(r.kl) for r in runs if r.L >= deep_from}
        rise = max((float(np.max(np.diff(k))) for k in shallow), default=float("nan"))
        floor = self.threshold("kl_floor")
        factor = {L: float(k[-1] / max(k[0], floor)) for L, k in deep.items()}
        tail = self.threshold("rising_tail")
        rising = {L: bool(np.all(np.diff(k[-max(2, int(len(k) * tail)):]) > 0)) for L, k in deep.items()}
        measured = (f"L = 1 largest KL increase {rise:.1e}; final/initial KL for L = "
                    + ", ".join(f"{L}: {f:.3g}" for L, f in factor.items()))
        numbers = {"shallow_max_rise": rise, "deep_growth": {str(L): f for L, f in factor.items()},
                   "deep_rising": {str(L): v for L, v in rising.items()}}
        failed = [f"L = {r.L}: {r.message}" for r in runs if not r.success]
        if failed or not shallow or not deep:
            return inconclusive("; ".join(failed) or f"needs an L = 1 run and one with L >= {deep_from}",
                                measured, **numbers)
        problems = []
        if rise > self.threshold("lyapunov"):
            problems.append(f"the L = 1 KL rises by {rise:.1e}")
        stuck = [L for L in deep if not (factor[L] > self.threshold("diverges") and rising[L])]
        if stuck:
            problems.append(f"no divergence for L = {stuck}")
        if problems:
            return disagrees("; ".join(problems), measured, **numbers)
        return agrees("non-increasing for L = 1; still rising and over 10-fold for every deep run", measured, **numbers)

    def render(self, ctx, evidence: Evidence, verdict: Verdict) -> str:
        path = trajectory_figure(ctx.path("dynamics_trajectory.png"), evidence.data.runs)
        return "\n".join([
            "KL divergence to NC used here: KL(uniform || S / sum S) over the K - 1 active modes "
            "(`implicitbias.numerics.metrics.kl_to_nc`); zero at NC, infinite when a mode vanishes.",
            "",
            f"![trajectories]({ctx.link(path)})",
        ])


CLAIM = KLToNC()
