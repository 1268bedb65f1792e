"""Optimisers (Muon and sign descent by hand, the rest from torch) and the measured order of
accuracy of derived modified flows."""
