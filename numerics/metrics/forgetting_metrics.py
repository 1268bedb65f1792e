"""Initialisation-memory metrics over per-epoch training histories (Spec B, section 1).

A history is a list of dicts, one per evaluated epoch, in epoch order, with at least the keys
``epoch``, ``train_acc``, ``val_loss``, ``val_acc``, ``test_acc``, ``kernel_norm`` (accuracies are
fractions in [0, 1]; ``kernel_norm`` the total ||W||_F of the kernels).  Per run:

    selected_epoch      argmin_e val_loss(e)        (first one on ties)
    selected_test_acc   test_acc at selected_epoch  (the validation-selected predictor)
    tau_interp          first epoch with train_acc >= 0.995, None if never
    repair_gap          val_acc(final) - val_acc(tau_interp), None if never interpolated

Across the sigma_w of one group (runs identical except for sigma_w):

    spread              max - min of selected_test_acc across sigma_w
    norm_slope          least-squares slope of log final kernel norm against log sigma_w
                        (radial memory: ~1 when the final norm stays proportional to the initial
                        one, ~0 when every run ends at a common norm)

(``implicitbias.validation.analysis`` computes them per seed and over seeds.)

Statistics over seeds of these numbers: ``implicitbias.numerics.metrics.resampling``.

Source: Das et al., arXiv 2605.29152 (the metrics of Spec B, section 1).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
from implicitbias.theory import params

__all__ = [
    "INTERPOLATION_THRESHOLD",
    "selected_epoch",
    "selected_test_acc",
    "tau_interp",
    "repair_gap",
    "spread",
    "norm_slope",
    "run_summary",
]

INTERPOLATION_THRESHOLD = 0.995


def _checked(history: Sequence[Mapping]) -> Sequence[Mapping]:
    if not history:
        raise params.ParameterError("history must contain at least one epoch, got none")
    return history


def selected_epoch(history: Sequence[Mapping]) -> int:
    """The epoch of minimum validation loss (the first such epoch)."""
    history = _checked(history)
    return int(min(history, key=lambda row: row["val_loss"])["epoch"])


def selected_test_acc(history: Sequence[Mapping]) -> float:
    """Test accuracy at the epoch of minimum validation loss."""
    history = _checked(history)
    return float(min(history, key=lambda row: row["val_loss"])["test_acc"])


def tau_interp(history: Sequence[Mapping], threshold: float = INTERPOLATION_THRESHOLD) -> int | None:
    """First epoch whose training accuracy reaches ``threshold``; None if none does."""
    threshold = params.real("threshold", threshold, minimum=0.0, maximum=1.0)
    return next((int(r["epoch"]) for r in _checked(history) if r["train_acc"] >= threshold), None)


def repair_gap(history: Sequence[Mapping], threshold: float = INTERPOLATION_THRESHOLD) -> float | None:
    """val_acc at the final epoch minus val_acc at tau_interp; None if never interpolated."""
    tau = tau_interp(history, threshold)
    if tau is None:
        return None
    at_tau = next(r for r in history if int(r["epoch"]) == tau)
    return float(history[-1]["val_acc"] - at_tau["val_acc"])


def spread(values: Sequence[float]) -> float:
    """Best minus worst value (e.g. validation-selected test accuracies across sigma_w)."""
    if len(values) == 0:
        raise params.ParameterError("values must be non-empty for a spread")
    return float(max(values) - min(values))


def norm_slope(sigma_ws: Sequence[float], final_norms: Sequence[float]) -> float:
    """Least-squares slope of log(final norm) against log(sigma_w) (needs >= 2 distinct sigma_w)."""
    s = np.asarray(sigma_ws, dtype=float)
    n = np.asarray(final_norms, dtype=float)
    if s.shape != n.shape or len(np.unique(s)) < 2:
        raise params.ParameterError("sigma_ws must hold at least two distinct values, one per final norm")
    if np.any(s <= 0) or np.any(n <= 0) or not np.all(np.isfinite(n)):
        raise params.ParameterError("sigma_ws and final_norms must be positive and finite")
    return float(np.polyfit(np.log(s), np.log(n), 1)[0])


def run_summary(history: Sequence[Mapping]) -> dict:
    """All per-run metrics of one history as a dict (plus the final row's accuracies and norm)."""
    history = _checked(history)
    final = history[-1]
    return {
        "selected_epoch": selected_epoch(history),
        "selected_test_acc": selected_test_acc(history),
        "tau_interp": tau_interp(history),
        "repair_gap": repair_gap(history),
        "final_train_acc": float(final["train_acc"]),
        "final_test_acc": float(final["test_acc"]),
        "initial_kernel_norm": float(history[0].get("kernel_norm", math.nan)),
        "final_kernel_norm": float(final["kernel_norm"]),
    }
