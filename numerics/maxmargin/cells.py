r"""Typed cells of the phase diagram of :math:`P(K, L)`, read by attribute.

``numerics.maxmargin.phase`` stores each column as a JSON record (the store's unit); a
``PhaseCell`` is one cell of such a record read into a frozen dataclass, for the atlas, the API and
users.  Problem (Spec A, section 3): :math:`P(K, L)`, minimise
:math:`S_p(\bar Z) = \sum_i \sigma_i(\bar Z)^p`, :math:`p = 2/(L + 1)`, subject to unit margins;
:math:`L` counts weight matrices (:math:`N = L + 1` factors).
This module imports numpy only, so the API can name the types without loading the solvers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from implicitbias.theory.display import Tabular, field_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Certificate", "PhaseCell"]


@dataclass(frozen=True)
class Certificate:
    """Why a cell has its verdict.

    Attributes
    ----------
    kind : str
        ``exact`` (a closed form compared exactly with NC, or a proof for :math:`K = 2, 3`),
        ``convex`` (:math:`L = 1`: dual bounds of the nuclear-norm problem), ``numerical`` (a
        re-verified matrix below :math:`K - 1` by more than the relative gap ``phase.GAP``) or
        ``none`` (NC best found).
    structure : str or None
        The structure that beats NC, where one does.
    details : Mapping
        Every number the certificate rests on, as recorded.

    See Also
    --------
    PhaseCell : the cell it certifies (``cell.certificate``).
    """

    kind: str
    structure: str | None
    details: Mapping[str, Any] = field(repr=False)  # every number, as recorded: too long to print


@dataclass(frozen=True, repr=False)
class PhaseCell(Tabular):
    r"""One cell :math:`(K, L)` of the phase diagram of :math:`P(K, L)`: minimise :math:`S_p(\bar Z)`, :math:`p = 2/(L + 1)`.

    In a notebook it shows as a table of ``row()``; ``to_frame()`` is that row.

    :math:`L` counts weight matrices (:math:`N = L + 1` factors).

    Attributes
    ----------
    K : int
        The number of classes.
    L : int or float
        The depth.
    p : float
        The Schatten exponent :math:`2/(L + 1)`.
    verdict : str
        ``NC suboptimal`` (an explicit, re-verified matrix with a smaller objective),
        ``NC optimal`` (certified) or ``NC best found``.
    structure : str
        The best matrix's name, from its invariants.
    key : str or None
        The closed-form code's key ("" when unnamed).
    rank : int
        The rank of the best matrix.
    value : float
        :math:`S_p` of the best matrix.
    nc_value : float
        :math:`S_p` of neural collapse, :math:`K - 1`.
    lower_bound : float
        A certified lower bound on the optimum (of kind ``lower_bound_kind``).
    gap : float
        :math:`(\text{value} - \text{lower bound}) / \text{value}`.
    certificate : Certificate
        Why the cell has its verdict.
    closed_form : str or None
        The objective's exact expression when the structure is named.
    matrix : numpy.ndarray
        The best matrix, :math:`K \times K`, at unit margin.
    lower_bound_kind : str
        How ``lower_bound`` is certified.
    symmetry_order : int
        The order of the structure's symmetry group (0: not computed, above 32 classes).
    vertex_transitive : bool
        Whether the structure is vertex-transitive.
    start : str
        The search start the best matrix came from.
    solver_success : bool
        scipy's report on the final local solve.
    solver_message : str
        scipy's message.
    record : Mapping
        The stored record (``phase_column``'s nested dict) it was read from.

    See Also
    --------
    implicitbias.phase_diagram : computes cells (its example reads some).
    """

    K: int
    L: int | float
    p: float
    verdict: str
    structure: str
    key: str | None
    rank: int
    value: float
    nc_value: float
    lower_bound: float
    gap: float
    certificate: Certificate
    closed_form: str | None
    matrix: np.ndarray = field(repr=False)
    lower_bound_kind: str = field(repr=False)
    symmetry_order: int = field(repr=False)
    vertex_transitive: bool = field(repr=False)
    start: str = field(repr=False)
    solver_success: bool = field(repr=False)
    solver_message: str = field(repr=False)
    record: Mapping[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PhaseCell:
        """The typed cell of a cell record of ``phase_column`` (its nested dict)."""
        best, cert = record["best"], record["certificate"]
        return cls(
            K=int(record["K"]),
            L=record["L"],
            p=float(record["p"]),
            verdict=record["verdict"],
            structure=best["structure"]["name"],
            key=best["structure"]["key"],
            rank=int(best["rank"]),
            value=float(best["objective"]),
            nc_value=float(record["nc_objective"]),
            lower_bound=float(record["lower_bound"]["value"]),
            gap=float(record["gap"]),
            certificate=Certificate(cert["kind"], cert.get("structure"), dict(cert)),
            closed_form=record["closed_form"]["expression"] if record["closed_form"] else None,
            matrix=np.array(best["Z"], dtype=float),
            lower_bound_kind=record["lower_bound"]["kind"],
            symmetry_order=int(best["structure"]["aut_order"]),
            vertex_transitive=bool(best["structure"]["vertex_transitive"]),
            start=best["start"],
            solver_success=bool(best["success"]),
            solver_message=best["message"],
            record=record,
        )

    @property
    def nc_optimal(self) -> bool:
        """Is NC certified optimal here?"""
        return self.verdict == "NC optimal"

    def row(self) -> dict[str, Any]:
        """The cell as one flat row: the columns of ``phase_cells.csv`` (``matrix`` names its key
        in ``phase_atlas.npz``)."""
        return {
            "K": self.K, "L": self.L, "p": self.p, "verdict": self.verdict,
            "structure": self.structure, "key": self.key, "rank": self.rank, "aut_order": self.symmetry_order,
            "vertex_transitive": self.vertex_transitive, "objective": self.value, "nc_objective": self.nc_value,
            "closed_form": self.closed_form or "", "lower_bound": self.lower_bound,
            "lower_bound_kind": self.lower_bound_kind, "gap": self.gap, "certificate": self.certificate.kind,
            "start": self.start, "solver_success": self.solver_success, "solver_message": self.solver_message,
            "matrix": f"K{self.K}_L{self.L}",
        }

    def to_frame(self) -> pd.DataFrame:
        """``row()`` as a one-row DataFrame."""
        import pandas as pd

        return pd.DataFrame([self.row()])

    def _display_frame(self) -> pd.DataFrame:
        return field_frame(self.row())

    def _caption(self) -> str:
        return f"PhaseCell (K = {self.K}, L = {self.L}): {self.verdict}"

    def __repr__(self) -> str:
        return (
            f"PhaseCell(K={self.K}, L={self.L}, verdict={self.verdict!r}, structure={self.structure!r}, "
            f"rank={self.rank}, value={self.value:.6g}, nc_value={self.nc_value:g}, "
            f"certificate={self.certificate.kind!r})"
        )
