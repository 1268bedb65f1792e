"""The torch dtype of a run's parameters and data from its ``precision`` setting.

``precision`` is one of ``validation.run.PRECISIONS``: ``float64`` trains in float64; ``float32``
and ``bf16`` keep float32 parameters (``bf16`` runs the forward pass under ``torch.autocast`` with
bfloat16, which the training loop sets up).
"""

from __future__ import annotations

import torch

__all__ = ["parameter_dtype"]


def parameter_dtype(precision: str) -> torch.dtype:
    """float64 for ``precision == "float64"``, else float32 (bf16 autocasts float32 parameters)."""
    return torch.float64 if precision == "float64" else torch.float32
