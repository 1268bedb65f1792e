"""The direction along which initialisation memory changes: C7's test of a forgetting clock.

Source: Das et al., arXiv 2605.29152 (Spec B s. 2 C7, s. 3): memory is governed by a cumulative
clock, T_SGD = (1/b) sum eta^2, T_L2 = lambda sum eta or T_adapt = sum eta, not by epochs, steps or
the learning rate.  A monotone law in any predictor that contains the clock fits as well as the
clock, so C7 is tested as a *direction* on a grid where the clock and its rivals point different
ways.

Named directions.  On a grid of constant learning rates every predictor is a power law in the
run's axes (eta, b, E, lambda) (N training images, S = ceil(N / b) E steps):

    T_SGD   = eta^2 E N / b^2     exponents (2, -2, 1, 0)      steps      = E N / b    (0, -1, 1, 0)
    T_L2    = lambda eta E N / b  (1, -1, 1, 1)                epochs     = E          (0, 0, 1, 0)
    T_adapt = eta E N / b         (1, -1, 1, 0)                lr         = eta        (1, 0, 0, 0)
    sum eta^2 = eta^2 E N / b     (2, -1, 1, 0)                lambda, lambda eta      (0,0,0,1), (1,0,0,1)

(``lr x steps`` is T_adapt on a constant schedule and is not listed twice.)

Coordinates.  The groups' log predictors span the design; its coordinates are chosen in the order
log clock, log steps, log b, log lambda, log eta, log E, keeping each that adds a dimension, so a
crossed grid of clock lines x horizons is the plane (x, z) = (log clock, log steps).  A named
direction is the gradient of its log predictor in these coordinates (``Design.direction``).

Statistic.  Each group's memory is the mean over seeds of a per-seed value (C7: the radial memory,
a norm slope in [0, 1], on the logit scale ``logit(clip(ybar, CLIP, 1 - CLIP))``), fitted by least
squares as a + g . u over the groups' coordinates u (coordinates beyond the plane, such as log b on
a batch line, are held by the fit).  The direction of change is the line of g in the plane,

    theta = atan(g_steps / g_clock)   in (-90, 90] degrees,

0 when memory changes along the clock only (a line: the sign of g does not matter).  Its interval:
the estimate +- t_{n-1} bootstrap standard errors, the bootstrap over seeds resampling them jointly
for every group (the seeds, hence the initialisations, are shared across groups), the draws
unwrapped around the estimate; its coverage is measured by ``simulate`` and the level widened from
``LEVELS`` until it covers.  Every rival has its
own angle in the plane; a rival within ``CONTAINED`` degrees of the clock contains it on this grid
(reported, never used to decide).  Rule (``decide``), the bound halfway to the nearest rival that
does not contain the clock:

    agrees        the interval inside (-bound, bound)
    disagrees     the interval misses [-bound, bound] (memory changes along a line nearer a rival)
    inconclusive  otherwise.

Beside it the free fit of memory on the logs of the axes that vary (``exponents``), with bootstrap
intervals: the quantitative content of a clock (T_SGD says the lr exponent is twice the epochs').

Operating characteristics (``simulate``) draw seed x group tables: in the world of the clock, of
every rival, and at bound / NEAR and bound x NEAR (close to the bound on either side), each group's
mean memory falls along that world's line with the strength the data show along their own, and each seed's value adds noise drawn (``noise``): normal
with each group's measured seed sd, the data's own residual seed rows (resampled, so the
correlation across groups stays), or Student t (3 df) at the same sd (misspecified).  The whole
rule (fit, bootstrap, bound) is recomputed on every table.

Written by hand because no library fits a direction with a paired bootstrap: numpy least squares
vectorised over bootstrap and simulation axes.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from implicitbias.theory import params

__all__ = ["AXES", "NAMED", "CLIP", "CONTAINED", "BOOTSTRAP", "LEVEL", "LEVELS", "NEAR", "NOISES", "Design", "Angle", "Exponent",
           "DirectionTest", "World", "OC", "HALFWAY", "memory_logit", "direction_test", "decide", "bound_of", "worlds",
           "simulate_levels", "simulate"]

AXES = ("lr", "batch_size", "epochs", "weight_decay")
NAMED: Mapping[str, tuple[float, float, float, float]] = {
    "T_SGD": (2, -2, 1, 0), "T_L2": (1, -1, 1, 1), "T_adapt": (1, -1, 1, 0), "sum eta^2": (2, -1, 1, 0),
    "steps": (0, -1, 1, 0), "epochs": (0, 0, 1, 0), "lr": (1, 0, 0, 0), "lambda": (0, 0, 0, 1),
    "lambda eta": (1, 0, 0, 1),
}
_COORDINATES = ("steps", "batch", "lambda", "lr", "epochs")  # after the clock, in this order
_UNIT = {"steps": NAMED["steps"], "batch": (0, 1, 0, 0), "lambda": NAMED["lambda"], "lr": NAMED["lr"],
         "epochs": NAMED["epochs"]}
CLIP = 0.02  # a memory fraction is clipped to [CLIP, 1 - CLIP] before its logit
CONTAINED = 1.0  # degrees: a rival this close to the clock on the grid contains it
BOOTSTRAP = 1000
LEVEL = 0.95
HALFWAY = 0.5  # the bound's default place between the clock and its nearest rival


def _independent(columns: Sequence[np.ndarray]) -> list[int]:
    """The indices of ``columns`` (each a value per group), in order, that each add a dimension to the
    span of the centred columns kept before them."""
    kept: list[int] = []
    for i, col in enumerate(columns):
        trial = np.column_stack([columns[j] - columns[j].mean() for j in [*kept, i]])
        if np.linalg.matrix_rank(trial, tol=1e-8) > len(kept):
            kept.append(i)
    return kept


def memory_logit(y):
    """logit(clip(y, CLIP, 1 - CLIP)): the scale on which a fraction's direction is fitted."""
    y = np.clip(np.asarray(y, dtype=float), CLIP, 1 - CLIP)
    return np.log(y / (1 - y))


@dataclass(frozen=True)
class Design:
    """The groups' axes (G x 4 logs of ``AXES``; log lambda 0 without decay) and their coordinates.

    ``axes`` the groups' (eta, b, E, lambda); ``coordinates`` names the columns of ``u`` (G x k,
    centred); ``rank`` is k."""

    clock: str
    axes: np.ndarray
    logs: np.ndarray
    coordinates: tuple[str, ...]
    u: np.ndarray

    @classmethod
    def of(cls, clock: str, axes: Sequence[Sequence[float]]) -> Design:
        """The design of groups with ``axes`` (one (eta, b, E, lambda) per group; lambda 0: no decay, and
        then the predictors with a lambda name no direction)."""
        params.choice("clock", clock, tuple(NAMED))
        a = np.asarray(axes, dtype=float)
        if a.ndim != 2 or a.shape[1] != len(AXES) or len(a) < 3:
            raise params.ParameterError("axes must hold one (lr, batch_size, epochs, weight_decay) per group, "
                                        "at least 3 groups")
        if np.any(a[:, :3] <= 0) or np.any(a[:, 3] < 0) or not np.all(np.isfinite(a)):
            raise params.ParameterError("axes must be finite, lr, batch_size and epochs positive, weight_decay >= 0")
        logs = np.log(np.where(a > 0, a, 1.0))
        # log clocks rounded so that equal clocks summed in another order are equal (the tie bug of issue 27)
        logs = np.round(logs, 9)
        decayed = bool(np.all(a[:, 3] > 0))
        candidates = [(name, logs @ np.asarray(e, dtype=float))
                      for name, e in [(clock, NAMED[clock]), *((c, _UNIT[c]) for c in _COORDINATES)]
                      if e[3] == 0 or decayed]
        kept = [candidates[i] for i in _independent([col for _, col in candidates])]
        names = [name for name, _ in kept]
        u = np.column_stack([col - col.mean() for _, col in kept]) if kept else np.zeros((len(a), 0))
        return cls(clock, a, logs, tuple(names), u)

    @property
    def rank(self) -> int:
        return self.u.shape[1]

    @property
    def identified(self) -> list[int]:
        """The axes the free fit can identify: in the order epochs, decay, batch size, lr, each that
        varies independently of those kept before it (on the SGD-with-decay grid lr is tied to the
        epochs and is left out)."""
        order = (2, 3, 1, 0)
        return sorted(order[i] for i in _independent([self.logs[:, i] for i in order]))

    def profile(self, exponents: Sequence[float]) -> tuple[float, ...]:
        """A named predictor's coefficients on the ``identified`` axes (its log values regressed on
        theirs): what the free fit would find, up to a factor, if memory followed that predictor."""
        p = self.logs @ np.asarray(exponents, dtype=float)
        v = self.logs[:, self.identified] - self.logs[:, self.identified].mean(0)
        coef, *_ = np.linalg.lstsq(v, p - p.mean(), rcond=None)
        return tuple(float(c) for c in coef)

    @property
    def decayed(self) -> bool:
        """Every group has a positive decay lambda (else lambda's predictors are not defined)."""
        return bool(np.all(self.axes[:, 3] > 0))

    @property
    def crossed(self) -> bool:
        """The clock and the steps vary independently: the grid spans the (log clock, log steps) plane."""
        return self.coordinates[:2] == (self.clock, "steps")

    def direction(self, exponents: Sequence[float]) -> np.ndarray | None:
        """The gradient of a log predictor (``exponents`` on ``AXES``) in the design's coordinates; None
        when it is constant on the grid (it does not vary, so it names no direction here)."""
        e = np.asarray(exponents, dtype=float)
        if e[3] != 0 and not self.decayed:
            return None
        p = self.logs @ e
        p = p - p.mean()
        if np.ptp(p) < 1e-9:
            return None
        coef, *_ = np.linalg.lstsq(self.u, p, rcond=None)
        return coef


def _wrap(theta):
    """Angles of lines (degrees) wrapped into (-90, 90]."""
    return 90.0 - np.mod(90.0 - np.asarray(theta, dtype=float), 180.0)


def _plane_angle(g: np.ndarray) -> np.ndarray:
    """Signed angle (degrees, (-90, 90]) of the line of each gradient row (..., k) in the (log clock,
    log steps) plane: 0 along the clock, 90 along the steps at a fixed clock."""
    return _wrap(np.degrees(np.arctan2(g[..., 1], g[..., 0])))


def _gradients(u: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Least-squares gradients of y (..., G) on the centred coordinates u (G, k): (..., k)."""
    pinv = np.linalg.pinv(u)  # (k, G); u is centred, so the intercept drops out
    return (y - y.mean(-1, keepdims=True)) @ pinv.T


def _interval(theta_hat, draws: np.ndarray, level: float, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Interval of a line angle from its bootstrap ``draws`` (..., B) around ``theta_hat`` (...,): the
    estimate +- t_{n-1} x the draws' sd x sqrt(n / (n - 1)) (the bootstrap sd of a mean of n seeds is
    sqrt((n - 1) / n) of its sd; t for few seeds), with the draws unwrapped around the estimate so an
    interval may pass +-90 degrees (a line at 89 and one at -89 are 2 degrees apart)."""
    from scipy.stats import t

    theta_hat = np.asarray(theta_hat, dtype=float)
    sd = _wrap(draws - theta_hat[..., None]).std(-1)
    half = t.ppf(1 - (1 - level) / 2, n - 1) * sd * math.sqrt(n / (n - 1))
    return theta_hat - half, theta_hat + half


@dataclass(frozen=True)
class Angle:
    """A named direction's signed angle in the (log clock, log steps) plane (degrees, (-90, 90]); the
    clock's is 0, ``contained``: within ``CONTAINED`` of it (the rival cannot be told from the clock)."""

    name: str
    angle: float

    @property
    def contained(self) -> bool:
        return abs(self.angle) < CONTAINED


@dataclass(frozen=True)
class Exponent:
    """The free fit's coefficient of logit memory on log ``axis`` with its bootstrap interval."""

    axis: str
    estimate: float
    lo: float
    hi: float


@dataclass(frozen=True)
class DirectionTest:
    """C7's direction test on one family's grid (module docstring).

    ``angle``: the fitted memory gradient's signed angle in the (log clock, log steps) plane, with its
    bootstrap-t interval [``lo``, ``hi``] (``level``; it may pass +-90); ``rivals``: every
    other named direction that has one in the plane; ``bound``: half the angle to the nearest rival
    that does not contain the clock (``bound_of``); ``nearest``: the named directions nearest the fit
(" / " between lines within ``CONTAINED`` of each other); ``gradient``:
    the fitted gradient in ``coordinates``; ``exponents``: the free fit; ``n`` seeds, ``groups``."""

    clock: str
    angle: float
    lo: float
    hi: float
    rivals: tuple[Angle, ...]
    bound: float
    nearest: str
    coordinates: tuple[str, ...]
    gradient: tuple[float, ...]
    exponents: tuple[Exponent, ...]
    n: int
    groups: int
    level: float
    resamples: int

    @property
    def outcome(self) -> str:
        return str(decide(self.lo, self.hi, self.bound))


def decide(lo, hi, bound: float):
    """The rule on an angle interval [lo, hi] (degrees, unwrapped around its estimate; vectorised):
    agrees inside (-bound, bound), disagrees when it misses [-bound, bound] and its turn by 180
    degrees, else inconclusive."""
    lo, hi = np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    inside = (lo > -bound) & (hi < bound)
    misses = ((lo > bound) & (hi < 180 - bound)) | ((hi < -bound) & (lo > bound - 180))
    return np.where(inside, "agrees", np.where(misses, "disagrees", "inconclusive"))


def _check_table(table) -> np.ndarray:
    y = np.asarray(table, dtype=float)
    if y.ndim != 2 or y.shape[0] < 2 or y.shape[1] < 3 or not np.all(np.isfinite(y)):
        raise params.ParameterError("table must be finite, seeds x groups, at least 2 seeds and 3 groups")
    return y


def _check_design(design: Design, y: np.ndarray) -> None:
    if y.shape[1] != len(design.logs):
        raise params.ParameterError(f"table must have one column per group of the design ({len(design.logs)})")
    if not design.crossed:
        raise params.ParameterError("design must vary the clock and the steps independently (a crossed grid)")


def _rivals(design: Design) -> tuple[Angle, ...]:
    """Every named direction other than the clock with a direction in the (log clock, log steps) plane."""
    out = []
    for name, e in NAMED.items():
        d = design.direction(e)
        if name != design.clock and d is not None and np.hypot(d[0], d[1]) > 1e-9:
            out.append(Angle(name, float(_plane_angle(d))))
    return tuple(out)


def bound_of(rivals: Sequence[Angle], fraction: float = HALFWAY) -> float:
    """``fraction`` of the angle from the clock to the nearest rival that does not contain it (NaN if none)."""
    deciding = [abs(r.angle) for r in rivals if not r.contained]
    return fraction * min(deciding) if deciding else math.nan


def direction_test(design: Design, table, level: float = LEVEL, resamples: int = BOOTSTRAP,
                   seed: int = 0, fraction: float = HALFWAY) -> DirectionTest:
    """The direction test of memory ``table`` (seeds x groups, per-seed memory fractions, seeds paired
    across groups) on ``design`` (module docstring), its bound ``fraction`` of the way to the nearest
    rival."""
    y = _check_table(table)
    _check_design(design, y)
    level = params.real("level", level, minimum=0.5, maximum=0.999)
    resamples = params.integer("resamples", resamples, minimum=100, maximum=100_000)
    rng = np.random.default_rng(seed)
    n = y.shape[0]
    idx = rng.integers(0, n, (resamples, n))
    logit = memory_logit(y.mean(0))
    boot = memory_logit(y[idx].mean(1))  # (B, G)
    g = _gradients(design.u, logit)
    theta = float(_plane_angle(g))
    lo, hi = _interval(theta, _plane_angle(_gradients(design.u, boot)), level, n)
    rivals = _rivals(design)
    named = [Angle(design.clock, 0.0), *rivals]
    gap = {r.name: abs(float(_wrap(theta - r.angle))) for r in named}
    nearest = " / ".join(r.name for r in named if gap[r.name] < min(gap.values()) + CONTAINED)
    cols = design.identified
    v = design.logs[:, cols] - design.logs[:, cols].mean(0)
    beta, beta_b = _gradients(v, logit), _gradients(v, boot)
    tail = (1 - level) / 2
    exps = tuple(Exponent(AXES[c], float(beta[i]), float(np.quantile(beta_b[:, i], tail)),
                          float(np.quantile(beta_b[:, i], 1 - tail))) for i, c in enumerate(cols))
    return DirectionTest(design.clock, theta, float(lo), float(hi), rivals, bound_of(rivals, fraction), nearest,
                         design.coordinates, tuple(float(x) for x in g), exps, n, y.shape[1], level, resamples)


@dataclass(frozen=True)
class World:
    """One simulated world: memory falls along the line at ``angle`` (degrees in the plane) named
    ``name``; ``claim``: whether the clock governs there (the angle inside the bound)."""

    name: str
    angle: float
    claim: bool


@dataclass(frozen=True)
class OC:
    """Simulated rates of the direction test.  ``disagree_true``: the largest P(disagrees) over the
    worlds where the clock holds (the clock's own and one at ``bound / NEAR``); ``agree_false``: the
    largest P(agrees) over the rival worlds and one at ``bound x NEAR`` (``worst`` names it);
    ``agree_true``: P(agrees | clock world); ``coverage``: the smallest coverage of the angle's
    interval over the worlds at ``level`` (the narrowest of ``LEVELS`` that covers, ``simulate``);
    ``sims`` tables per world, ``n`` seeds, ``noise`` how seeds were drawn."""

    agree_true: float
    disagree_true: float
    agree_false: float
    worst: str
    coverage: float
    level: float
    sims: int
    n: int
    noise: str

    @property
    def wrong(self) -> float:
        return max(self.agree_false, self.disagree_true)

    @property
    def covers(self) -> bool:
        """The coverage reaches 95% less two Monte Carlo standard errors of ``sims`` tables."""
        return self.coverage >= 0.95 - 2 * math.sqrt(0.95 * 0.05 / self.sims)


NOISES = ("normal", "resampled", "student-t")
LEVELS = (0.95, 0.975, 0.99, 0.995, 0.998)  # interval levels tried, narrowest first, until coverage >= 95%
NEAR = 1.25  # the worlds close to the bound: at bound / NEAR (the clock holds) and bound x NEAR (it fails)
_CHUNK = 50


def _noise(y: np.ndarray, kind: str, sims: int, n: int, rng: np.random.Generator) -> np.ndarray:
    """(sims, n, G) seed noise: normal at each group's seed sd, the data's centred seed rows resampled,
    or Student t with 3 df scaled to the same sd."""
    sd = y.std(0, ddof=1)
    if kind == "normal":
        return sd * rng.standard_normal((sims, n, y.shape[1]))
    if kind == "resampled":
        rows = (y - y.mean(0)) * math.sqrt(len(y) / (len(y) - 1))  # centred rows with the unbiased variance
        return rows[rng.integers(0, len(y), (sims, n))]
    return sd * rng.standard_t(3, (sims, n, y.shape[1])) / math.sqrt(3.0)


def worlds(design: Design, fraction: float = HALFWAY) -> list[World]:
    """The clock's world, one at bound / NEAR and one at bound x NEAR (on the side of the nearest rival;
    the bound ``fraction`` of the way to it), and one per rival that does not contain the clock."""
    rivals = [r for r in _rivals(design) if not r.contained]
    bound = bound_of(rivals, fraction)
    side = math.copysign(1.0, min(rivals, key=lambda r: abs(r.angle)).angle)
    return [World(design.clock, 0.0, True), World(f"{side * bound / NEAR:+.3g} deg", side * bound / NEAR, True),
            World(f"{side * bound * NEAR:+.3g} deg", side * bound * NEAR, False),
            *(World(r.name, r.angle, False) for r in rivals)]


def _world_means(design: Design, angle: float, logit: np.ndarray, strength: float) -> np.ndarray:
    """Group means (fractions) of a world where logit memory falls along the plane's line at ``angle``
    (other coordinates held) with the data's strength (the sd of the fitted logits over the groups)."""
    t = math.radians(angle)
    d = np.zeros(design.rank)
    d[0], d[1] = math.cos(t), math.sin(t)
    p = design.u @ d
    p = (p - p.mean()) / p.std()
    return 1 / (1 + np.exp(-(logit.mean() - strength * p)))


def simulate_levels(design: Design, table, sims: int = 400, n: int | None = None, noise: str = "normal",
                    resamples: int = 400, levels: Sequence[float] = LEVELS, seed: int = 0,
                    fraction: float = HALFWAY) -> list[OC]:
    """Operating characteristics of the rule on this grid (module docstring) at each of ``levels``, from
    one simulation: ``sims`` tables per world (``worlds``) of ``n`` seeds (default: the table's), each
    refitted with its own ``resamples`` bootstrap; the whole rule recomputed on every table."""
    y = _check_table(table)
    _check_design(design, y)
    params.choice("noise", noise, NOISES)
    sims = params.integer("sims", sims, minimum=10, maximum=100_000)
    n = y.shape[0] if n is None else params.integer("n", n, minimum=2, maximum=4096)
    levels = tuple(params.real("level", lev, minimum=0.5, maximum=0.999) for lev in levels)
    rng = np.random.default_rng(seed)
    logit = memory_logit(y.mean(0))
    strength = float((design.u @ _gradients(design.u, logit)).std())
    bound = bound_of(_rivals(design), fraction)
    all_worlds = worlds(design, fraction)
    coverage = np.zeros((len(all_worlds), len(levels)))
    agree, disagree = np.zeros_like(coverage), np.zeros_like(coverage)
    for i, w in enumerate(all_worlds):
        mean = _world_means(design, w.angle, logit, strength)
        truth = float(_plane_angle(_gradients(design.u, memory_logit(mean))))
        tables = mean + _noise(y, noise, sims, n, rng)  # (sims, n, G)
        theta = _plane_angle(_gradients(design.u, memory_logit(tables.mean(1))))
        lo, hi = np.empty((len(levels), sims)), np.empty((len(levels), sims))
        for start in range(0, sims, _CHUNK):  # chunks keep (chunk, B, n, G) in memory
            idx = rng.integers(0, n, (resamples, n))
            boot = memory_logit(tables[start:start + _CHUNK][:, idx].mean(2))  # (chunk, B, G)
            stop = start + len(boot)
            draws = _plane_angle(_gradients(design.u, boot))
            for j, lev in enumerate(levels):
                lo[j, start:stop], hi[j, start:stop] = _interval(theta[start:stop], draws, lev, n)
        hit = np.zeros((len(levels), sims), bool)
        for turn in (-180.0, 0.0, 180.0):  # a line's angle is defined up to a half turn
            hit |= (lo <= truth + turn) & (truth + turn <= hi)
        out = decide(lo, hi, bound)
        coverage[i], agree[i], disagree[i] = hit.mean(1), (out == "agrees").mean(1), (out == "disagrees").mean(1)
    claim = np.array([w.claim for w in all_worlds])
    ocs = []
    for j, lev in enumerate(levels):
        worst = int(np.flatnonzero(~claim)[np.argmax(agree[~claim, j])])
        ocs.append(OC(float(agree[0, j]), float(disagree[claim, j].max()), float(agree[worst, j]),
                      all_worlds[worst].name, float(coverage[:, j].min()), lev, sims, n, noise))
    return ocs


def simulate(design: Design, table, sims: int = 400, n: int | None = None, noise: str = "normal",
             resamples: int = 400, level: float | None = None, seed: int = 0, fraction: float = HALFWAY) -> OC:
    """``simulate_levels`` at ``level``, or, without it, at the narrowest of ``LEVELS`` that covers in
    every world (``OC.covers``), else the widest."""
    ocs = simulate_levels(design, table, sims, n, noise, resamples, LEVELS if level is None else (level,), seed,
                          fraction)
    return next((oc for oc in ocs if oc.covers), ocs[-1])


