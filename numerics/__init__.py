"""Numerical layer: solvers, flows, metrics. May import implicitbias.theory, nothing above."""
