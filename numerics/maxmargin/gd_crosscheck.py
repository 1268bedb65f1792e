"""Gradient-descent cross-check of the P(K, L) solver on the full deep UFM (Spec A, section 1).

Depth L counts weight matrices; the features are one more factor, N = L + 1, p = 2/(L + 1).
Lyu & Li (2020) and Ji & Telgarsky (2020): gradient descent on the unregularised cross-entropy of
an N-homogeneous model converges in direction to a KKT point of

    min 1/2 ||theta||^2  s.t. every margin >= 1,

whose logits solve P(K, L): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p subject to margins >= 1
(representation cost (N/2) S_p).  ``gd_crosscheck`` is an independent route to the solver's
values: it trains [H, W_1, ..., W_L] (width d, n = 1 sample per class, i.i.d. N(0, scale^2/d)
init, float64) by normalised gradient descent,

    theta_{k+1} = theta_k - lr grad l(theta_k) / ||grad l(theta_k)||   (steps of length lr),

until the loss falls below ``loss_target`` (the stable cross-entropy resolves ~1e-300) or
``steps`` run out.  Its final Zbar is rescaled to unit margin and re-verified (objective from an
SVD, structure from invariants by ``naming.identify`` after polishing it to the local minimum it
approaches), then compared with the solver's solution of the same structure: the branches of
the default search (``search.search``, effort 1) polished at this depth, same name, else same
rank.  Also recorded: the normalised margin gamma / ||theta||^N of the GD parameters next to the
solver's (N S_p)^(-N/2) (at a KKT point ||theta||^2 = N S_p at unit margin).
"""

from __future__ import annotations

import math
import time

from implicitbias.numerics.maxmargin.gd_census import gd_settings
from implicitbias.numerics.maxmargin.margin import min_margin, schatten_exponent
from implicitbias.numerics.maxmargin.naming import identify
from implicitbias.numerics.maxmargin.search import search
from implicitbias.numerics.maxmargin.solver import WARM_SCHEDULE, polish, refine_exact, verify
from implicitbias.numerics.ufm.deep_ufm import gaussian_init, gradient_descent
from implicitbias.theory import params

__all__ = ["KIND", "crosscheck_config", "gd_crosscheck"]

KIND = "maxmargin.gd-crosscheck"


def crosscheck_config(K: int, L: int, seed: int = 0, **settings) -> dict:
    """Canonical config of one cross-check cell (``gd_census.gd_settings`` and the seed)."""
    return {**gd_settings(K, L, **settings), "seed": params.integer("seed", seed, minimum=0, maximum=2**32 - 1)}


def gd_crosscheck(config: dict) -> dict:
    """Train the deep UFM by normalised GD and compare with the solver; a pure function of config.

    Returns a JSON-ready record: GD's unit-margin Zbar (``gd_Z``), its objective, structure, rank,
    steps, final loss, stop message and seconds; the solver's objective of the same structure and
    its global best; ``gap`` = (GD - solver same structure) / solver; ``ratio`` = GD seconds /
    solver seconds.  Raises ``ValueError`` if GD has not separated the classes when it stops.
    """
    c = crosscheck_config(**config)
    K, L = c["K"], c["L"]
    N, p = L + 1, schatten_exponent(L)
    t0 = time.perf_counter()
    factors = gaussian_init(K, L, c["d"], 1, scale=c["scale"], seed=c["seed"])
    run = gradient_descent(
        factors, c["lr"], c["steps"], record_every=1, normalized="gradient", loss_target=c["loss_target"]
    )
    gd_seconds = time.perf_counter() - t0
    Z = run.logits[-1]
    if not min_margin(Z) > 0:
        raise ValueError(f"GD did not separate the classes for {c} ({run.message or 'all steps ran'})")
    gd = verify(Z, p, "gradient descent")
    end = refine_exact(polish(gd.Z, p, "gradient descent", WARM_SCHEDULE))  # the KKT point GD approaches
    gd_name = identify(end.Z).name
    norm2 = sum(float((f * f).sum()) for f in run.factors)
    t1 = time.perf_counter()
    res = search(K, [L], effort=1, seed=c["seed"])
    solver_seconds = time.perf_counter() - t1
    branches = [refine_exact(polish(b.Z, p, b.start, WARM_SCHEDULE)) for b in res.branches if b.rank == end.rank]
    named = [(identify(s.Z).name, s) for s in [res.best[L], *branches]]
    same = [s for name, s in named if name == gd_name] or [s for _, s in named if s.rank == end.rank]
    ref = min(same, key=lambda s: s.objective) if same else None
    ref_name = next((name for name, s in named if s is ref), "")
    return {
        **c,
        "gd_objective": gd.objective,
        "gd_structure": gd_name,
        "gd_rank": end.rank,
        "gd_polished_objective": end.objective,
        "gd_normalised_margin": min_margin(Z) / norm2 ** (N / 2),
        "gd_steps": len(run.loss) - 1,
        "gd_final_loss": float(run.loss[-1]),
        "gd_message": run.message,
        "gd_seconds": gd_seconds,
        "solver_objective": ref.objective if ref else math.nan,
        "solver_structure": ref_name,
        "solver_normalised_margin": (N * ref.objective) ** (-N / 2) if ref else math.nan,
        "solver_global": res.best[L].objective,
        "solver_global_structure": named[0][0],
        "solver_seconds": solver_seconds,
        "gap": (gd.objective - ref.objective) / ref.objective if ref else math.nan,
        "ratio": gd_seconds / solver_seconds,
        "gd_Z": gd.Z.tolist(),
    }
