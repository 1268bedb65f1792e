"""Numerical layer, split by concern: ``maxmargin`` (the margin problem and its codes), ``ufm``
(deep-UFM dynamics), ``metrics``, ``optim``.  May import implicitbias.theory, nothing above."""
