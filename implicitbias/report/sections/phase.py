"""Report section: where neural collapse stops being optimal, and what replaces it (Spec A, s. 3).

Layout only.  The exhibit shows the atlas of P(K, L) (``implicitbias.atlas``): the structure map,
the verdict / rank / certified-gap heatmap, the class vectors of the rank-2 and rank-3 optima,
the boundary L*(K), the continuous-depth crossovers, and what gradient descent actually finds;
the numbers are ``implicitbias.claims.depth.phase_atlas.phase_atlas``'s (the claims layer computes them,
the GD census grid per tier included).  The verdicts are the claims of ``implicitbias.claims``
whose section is ``phase`` (Theorem 3.1, Theorem 3.2, L = 1); the phase columns they read are
the same store records as the exhibit's.  Depth L counts weight matrices; N = L + 1 factors.
"""

from __future__ import annotations

from implicitbias.atlas import (
    boundary_markdown,
    census_markdown,
    census_rows,
    crossover_rows,
    crossovers_markdown,
    draw_gd_census,
    large_k_markdown,
    write_outputs,
)
from implicitbias.claims.depth.phase_atlas import phase_atlas

NAME = "phase"
ORDER = 10
TITLE = "Where neural collapse stops being optimal, and what replaces it: the atlas of P(K, L) (Theorems 3.1, 3.2)"


def exhibit(ctx) -> str:
    atlas = phase_atlas(ctx)
    paths = write_outputs(atlas.columns, ctx.path("phase"), stem="phase")
    census_png = draw_gd_census(atlas.census.records, atlas.cells, ctx.path("phase/phase_gd_census.png"))
    codes = "\n\n".join(f"![rank-{r} optima]({ctx.link(paths[f'codes_rank{r}'])})"
                        for r in (2, 3) if f"codes_rank{r}" in paths)
    return rf"""
Problem $P(K, L)$: minimise $S_p(\bar Z) = \sum_i \sigma_i(\bar Z)^p$, $p = 2/(L + 1)$, over mean-logit
matrices $\bar Z$ with every margin $\bar Z_{{kk}} - \bar Z_{{ck}} \geq 1$ ($L$ weight matrices, $N = L + 1$
factors).  Each column $K$ is searched exactly at its shallow depths together (spherical codes of every
rank, named polytopes, their branches polished across depths, exact fixed-rank refinement; $L < 5$ up to 16
classes, $L < 4$ above) and, up to 32 classes, by a low-rank ladder at $L \geq 4$ (random and spherical
rank-3 and rank-4 codes moved at two pivot depths and finished exactly at each depth), keeping the better code
per cell; each cell's best matrix is re-verified and named from its
invariants (rank, spectrum, class-vector cosines, symmetry group); named structures carry exact
(sympy) objectives.  Files: [cells CSV]({ctx.link(paths['cells'])}), [matrices (npz)]({ctx.link(paths['atlas'])}).

![structure map]({ctx.link(paths['structures'])})

![verdict, rank and certified gap]({ctx.link(paths['heatmap'])})

{codes}

Boundary L*(K): the smallest integer depth at which NC is suboptimal, the structure that beats it
there, and the exact real depths at which the closed-form codes tie NC ([CSV]({ctx.link(paths['boundary'])})).

{boundary_markdown(atlas.boundary)}

A large-K row, K = {atlas.large[0].K} at L = {atlas.large[0].L}..{atlas.large[-1].L}: beyond the exact search's range (K <= 32) the
search is the rank-r route (codes Zbar = A B^T of rank r, a smooth soft-min of the margins, continuation;
spherical codes of ranks 2 to 32, the cross-polytope and random codes near each depth's best rank
as starts; each depth's best finished with the exact margins and re-verified), named from cheap
invariants (a known configuration up to relabelling, else rank and colour-refinement classes).  An
upper bound on the optimum, like every cell; against the exact search at K = 8-32, L = 2-6 it is
equal in 23 of 25 cells and below it in the other 2 (K = 32; benchmarks/RESULTS.md, "A hundred
classes, second pass").

{large_k_markdown(atlas.large)}

Crossovers: real depths where two structures optimal somewhere in a column tie (exact for named
pairs).

{crossovers_markdown(crossover_rows(atlas.columns))}

What gradient descent finds (deep UFM, n = 1, width 2K, N(0, 0.01/d) init, normalised GD with
steps of length 0.005 until the loss is below 1e-250; each end point polished to the local
minimum it approaches and named), next to the optimum:

![GD census]({ctx.link(census_png)})

{census_markdown(census_rows(atlas.census.records, atlas.cells))}
"""
