"""Validation layer: real training runs and sweeps. May import numerics and theory."""
