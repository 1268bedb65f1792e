"""Dynamics of the deep unconstrained-feature model: the full-matrix model and its gradient flow,
the derived singular-value ODEs integrated, and the trajectories, basins and alignments built on them."""
