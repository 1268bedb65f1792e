"""Metrics: neural-collapse NC1-NC4, effective ranks, KL divergence to NC, initialisation-memory
metrics of training histories."""
