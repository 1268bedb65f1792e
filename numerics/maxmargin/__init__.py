"""The deep-UFM max-margin problem P(K, L): margins and Schatten objectives, candidate codes,
the multi-start solver, the (K, L) phase diagram and the gradient-descent cross-check."""
