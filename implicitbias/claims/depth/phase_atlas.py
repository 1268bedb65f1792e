"""The exhibit of the report's phase section: the atlas of P(K, L) and what gradient descent finds.

Problem P(K, L) (Spec A, section 3): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p, p = 2/(L + 1),
over mean-logit matrices with every margin >= 1; L counts weight matrices (N = L + 1 factors).

:func:`phase_atlas` computes, through ``ctx.map`` (cached, resumable, fingerprinted), the phase
columns of the grid Theorem 3.1 judges in the context's tier (the same store records as the
claim's: ``numerics.maxmargin.phase``), their typed cells, the boundary L*(K), and the
gradient-descent census (``numerics.maxmargin.gd_census``: batched normalised GD on the deep UFM
from small random initialisation, each end point polished and named) on the grid ``CENSUS`` of
the tier, and one large-K row (``LARGE_K``: K = 50 in the default tier, 100 in the others, by
the rank-r route ``numerics.maxmargin.low_rank``).  ``implicitbias.report.sections.phase`` lays
the result out; it computes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from implicitbias.claims.depth.theorem_3_1 import CLAIM as THEOREM_3_1
from implicitbias.numerics.maxmargin import gd_census
from implicitbias.numerics.maxmargin.cells import CensusCell, PhaseCell
from implicitbias.numerics.maxmargin.phase import (
    boundary,
    cells_of,
    column_config,
    phase_configs,
    phase_diagram,
)

__all__ = ["CENSUS", "LARGE_K", "LARGE_DEPTHS", "GDCensus", "PhaseAtlas", "census", "phase_atlas"]

CENSUS = {  # (Ks, Ls, seeds) of the gradient-descent census per tier
    "default": ((4, 6, 8), (2, 3, 4), 16),
    "gpu": (tuple(range(4, 11)), tuple(range(2, 7)), 32),
    "full": (tuple(range(4, 11)), tuple(range(2, 7)), 32),
}

LARGE_K = {"default": 50, "gpu": 100, "full": 100}  # the atlas's large-K row per tier (the rank-r route)
LARGE_DEPTHS = tuple(range(1, 7))  # its depths


@dataclass(frozen=True)
class GDCensus:
    """Where GD ends on the grid Ks x Ls, ``seeds`` initialisations per cell: one record of
    ``gd_census.census_cell`` per (K, L), read as a ``CensusCell``, in (K, L) order."""

    Ks: tuple[int, ...]
    Ls: tuple[int, ...]
    seeds: int
    records: tuple[CensusCell, ...]


@dataclass(frozen=True)
class PhaseAtlas:
    """The phase section's numbers: the column records of the grid K <= ``kmax``, L <= ``lmax``
    (``phase_column``'s, every depth of one K each), their cells as ``PhaseCell``s in (K, L) order,
    the boundary rows (per K: the smallest integer L at which NC is suboptimal, what beats it, the
    exact threshold depths), the GD census, and the large-K row: the cells of the column
    ``LARGE_K[tier]`` at ``LARGE_DEPTHS`` (above ``low_rank.LOW_RANK_K`` classes: the rank-r route)."""

    kmax: int
    lmax: int
    columns: list[dict]
    cells: list[PhaseCell]
    boundary: list[dict]
    census: GDCensus
    large: list[PhaseCell]


def census(ctx) -> GDCensus:
    """The GD census of ``ctx.tier`` (grid ``CENSUS[ctx.tier]``), cells computed through ``ctx.map``."""
    Ks, Ls, seeds = CENSUS[ctx.tier]
    records = ctx.map(gd_census.KIND, gd_census.census_cell,
                      [gd_census.census_config(K, L, seeds=seeds) for K in Ks for L in Ls], desc="GD census")
    return GDCensus(tuple(Ks), tuple(Ls), seeds, tuple(CensusCell.from_record(r) for r in records))


def phase_atlas(ctx) -> PhaseAtlas:
    """The atlas of the phase grid Theorem 3.1 judges in ``ctx.tier``, the GD census and the large-K row."""
    config = THEOREM_3_1.config(ctx.tier)
    columns = phase_diagram(ctx.map, phase_configs(config.kmax, config.lmax))
    large = cells_of(phase_diagram(ctx.map, [column_config(LARGE_K[ctx.tier], LARGE_DEPTHS)]))
    cells = cells_of(columns)
    return PhaseAtlas(config.kmax, config.lmax, columns, cells, boundary(cells), census(ctx), large)
