"""implicitbias: the implicit bias of depth (neural collapse vs softmax codes) and forgetting clocks.

Layers (imports point down only): ``implicitbias`` (CLI, report, store, executors)
-> ``implicitbias.validation`` -> ``implicitbias.numerics`` -> ``implicitbias.theory``.
Depth convention everywhere: L counts weight matrices; N = L + 1 factors including features.
"""

__version__ = "0.1.0"
