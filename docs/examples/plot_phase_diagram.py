"""
Where neural collapse stops being optimal
=========================================

The phase diagram of the deep-UFM max-margin problem P(K, L): minimise
S_p(Zbar) = sum_i sigma_i(Zbar)^p with p = 2 / (L + 1) (L counts weight matrices) subject to unit
margins.  NC has S_p = K - 1 at every depth; past a depth that grows with K a lower-rank code wins.
"""

import matplotlib.pyplot as plt

import implicitbias as ib

diagram = ib.phase_diagram(K=range(2, 8), L=range(1, 6))
print(diagram.boundary())

# %%
# Each cell is a typed ``PhaseCell``: verdict, best structure, its rank and value, the certificate.
for cell in diagram:
    if cell.L == 4:
        print(
            f"K={cell.K}: {cell.verdict:13s} {cell.structure:28s} rank {cell.rank}  "
            f"S_p = {cell.value:.4f} (NC: {cell.nc_value:.0f}), certificate {cell.certificate.kind}"
        )

# %%
# The verdict, the rank of the best matrix and its gap to a certified lower bound, over (K, L),
# drawn into axes of our own (``diagram.plot()`` alone returns a new figure; the package never
# changes the matplotlib backend).
fig, axes = plt.subplots(1, 3, figsize=(13, 4), layout="constrained")
diagram.plot(ax=axes)
plt.show()

# %%
# In a notebook, results show as tables: ``diagram``, ``diagram.cell(K=6, L=4)``; as data frames,
# one row per cell:
diagram.to_frame()[["K", "L", "verdict", "structure", "rank", "objective", "gap"]].head()

# %%
# The objective of the best matrix against NC's K - 1, per K, along the depths.
fig, ax = plt.subplots(figsize=(6, 3.5))
for K in diagram.K[2:]:
    cells = [diagram.cell(K, L) for L in diagram.L]
    ax.plot(diagram.L, [c.value / c.nc_value for c in cells], marker="o", label=f"K = {K}")
ax.axhline(1.0, color="black", lw=0.8)
ax.set_xlabel("L (weight matrices; N = L + 1)")
ax.set_ylabel("best S_p / (K - 1)")
ax.legend()
plt.show()
