"""implicitbias: the implicit bias of depth (neural collapse vs softmax codes) and forgetting clocks.

Layers (imports point down only): ``implicitbias`` (CLI, report, store, executors)
-> ``implicitbias.validation`` -> ``implicitbias.numerics`` -> ``implicitbias.theory``.
Depth convention everywhere: L counts weight matrices; N = L + 1 factors including features.

The Python API (``implicitbias.api``) is re-exported here: ``import implicitbias as ib`` and
``ib.phase_diagram(K=range(2, 9), L=range(1, 7))``, ``ib.check("theorem-3.1")``, ...
"""

__version__ = "0.1.0"

from implicitbias.api import (  # noqa: E402  (the version is set first: the API's modules read it)
    Analysis,
    Certificate,
    Check,
    MarginProblem,
    PhaseCell,
    PhaseDiagram,
    SweepResult,
    analyse,
    check,
    forgetting_clocks,
    modified_flow,
    nc_metrics,
    open_store,
    phase_diagram,
    singular_value_ode,
    sweep,
)
from implicitbias import claims  # noqa: E402  (callable: ``ib.claims()`` lists the claims by slug)

__all__ = [
    "__version__",
    "Analysis",
    "Certificate",
    "Check",
    "MarginProblem",
    "PhaseCell",
    "PhaseDiagram",
    "SweepResult",
    "analyse",
    "check",
    "claims",
    "forgetting_clocks",
    "modified_flow",
    "nc_metrics",
    "open_store",
    "phase_diagram",
    "singular_value_ode",
    "sweep",
]
