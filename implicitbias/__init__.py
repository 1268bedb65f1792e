"""implicitbias: the implicit bias of depth (neural collapse vs softmax codes) and forgetting clocks.

Layers (imports point down only): ``implicitbias`` (CLI, report, store, executors)
-> ``implicitbias.validation`` -> ``implicitbias.numerics`` -> ``implicitbias.theory``.
Depth convention everywhere: L counts weight matrices; N = L + 1 factors including features.

The Python API (``implicitbias.api``) is re-exported here: ``import implicitbias as ib`` and
``ib.phase_diagram(K=range(2, 9), L=range(1, 7))``, ``ib.check("theorem-3.1")``, ``ib.claims()``...
It is imported on first use, so ``implicitbias --help`` does not load numpy.
"""

from __future__ import annotations

import importlib
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

try:
    __version__ = version("implicitbias")  # written once, in pyproject.toml
except PackageNotFoundError:  # a source tree on sys.path, never installed: no metadata to read
    __version__ = "0+unknown"

__all__ = [
    "__version__",
    "claims",
    "Analysis",
    "Certificate",
    "Check",
    "MarginProblem",
    "ParameterError",
    "PhaseCell",
    "PhaseDiagram",
    "SweepResult",
    "analyse",
    "check",
    "forgetting_clocks",
    "modified_flow",
    "nc_metrics",
    "open_store",
    "phase_diagram",
    "singular_value_ode",
    "sweep",
    "ForgettingMeter",
    "ForgettingCallback",
    "ImportedRuns",
    "import_runs",
]
_METER = frozenset({"ForgettingMeter", "ForgettingCallback"})  # implicitbias.meter's: they import torch
_API = frozenset(__all__) - {"__version__", "claims"} - _METER  # the names implicitbias.api defines

if TYPE_CHECKING:
    from implicitbias import claims
    from implicitbias.api import (
        Analysis,
        Certificate,
        Check,
        ImportedRuns,
        MarginProblem,
        ParameterError,
        PhaseCell,
        PhaseDiagram,
        SweepResult,
        analyse,
        check,
        forgetting_clocks,
        import_runs,
        modified_flow,
        nc_metrics,
        open_store,
        phase_diagram,
        singular_value_ode,
        sweep,
    )
    from implicitbias.meter import ForgettingCallback, ForgettingMeter


def __getattr__(name: str) -> Any:
    """The API's names, imported on first use; ``claims`` is the claims package, which is callable
    (``ib.claims()`` lists the claims by slug)."""
    if name in _API:
        return getattr(importlib.import_module("implicitbias.api"), name)
    if name in _METER:  # torch is imported with them, not with the rest of the API
        return getattr(importlib.import_module("implicitbias.meter"), name)
    if name == "claims":
        return importlib.import_module("implicitbias.claims")
    raise AttributeError(f"module 'implicitbias' has no attribute {name!r}")
