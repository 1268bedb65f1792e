r"""Typed cells of the phase diagram of :math:`P(K, L)`, read by attribute.

``numerics.maxmargin.phase`` computes each cell as a ``PhaseCell``, a frozen dataclass read by
attribute by the atlas, the claims, the API and users; the store keeps a column as one JSON record
whose cells are ``PhaseCell.to_record()`` (read back with ``PhaseCell.from_record``, the one place
that knows the record's layout).  Problem (Spec A, section 3): :math:`P(K, L)`, minimise
:math:`S_p(\bar Z) = \sum_i \sigma_i(\bar Z)^p`, :math:`p = 2/(L + 1)`, subject to unit margins;
:math:`L` counts weight matrices (:math:`N = L + 1` factors).
``CensusRun`` and ``CensusCell`` read the records of ``numerics.maxmargin.gd_census`` (where gradient
descent ends on the deep UFM) the same way: ``CensusCell.from_record`` is the one reader of its layout.
This module imports numpy only, so the API can name the types without loading the solvers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from implicitbias.theory.display import Tabular, field_frame

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Certificate", "NamedCode", "PhaseCell", "CensusRun", "CensusCell"]


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


@dataclass(frozen=True)
class NamedCode:
    """A named code of a cell (not NC): its exact objective at the cell's depth, and the exact sign
    of that objective minus NC's :math:`K - 1` (-1: it beats NC, 0: tie, +1: NC is better;
    ``theory.codes.compare_with_nc``).

    See Also
    --------
    PhaseCell : the cell that lists them (``cell.named``).
    """

    key: str
    objective: float
    exact_sign: int


@dataclass(frozen=True, repr=False)
class PhaseCell(Tabular):
    r"""One cell :math:`(K, L)` of the phase diagram of :math:`P(K, L)`: minimise :math:`S_p(\bar Z)`, :math:`p = 2/(L + 1)`.

    In a notebook it shows as a table of ``row()``; ``to_frame()`` is that row.  The store keeps
    it as ``to_record()`` (a nested dict, inside its column's record); ``from_record`` reads it back.

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
    effort, seed : int
        The search effort and seed of the cell's column.
    margin : float
        The best matrix's smallest margin (1 after re-verification).
    singular_values : tuple of float
        Its singular values, descending.
    iterations : int
        scipy's iterations behind it.
    orbit_sizes : tuple of int
        The orbits of the classes under the structure's symmetry group (Weisfeiler-Leman classes
        above 32 classes).
    equal_spectrum, symmetric : bool
        Whether its nonzero singular values are equal, and whether it is a symmetric matrix.
    cosines : tuple of float
        The distinct cosines between its class vectors.
    closed_form_value : float or None
        ``closed_form`` evaluated.
    named : tuple of NamedCode
        Every named code at :math:`K` but NC, with its exact objective and its exact sign against NC.

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
    effort: int = field(repr=False)
    seed: int = field(repr=False)
    margin: float = field(repr=False)
    singular_values: tuple[float, ...] = field(repr=False)
    iterations: int = field(repr=False)
    orbit_sizes: tuple[int, ...] = field(repr=False)
    equal_spectrum: bool = field(repr=False)
    symmetric: bool = field(repr=False)
    cosines: tuple[float, ...] = field(repr=False)
    closed_form_value: float | None = field(repr=False)
    named: tuple[NamedCode, ...] = field(repr=False)

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> PhaseCell:
        """The cell a stored record describes (the inverse of ``to_record``)."""
        best, cert, closed = record["best"], record["certificate"], record["closed_form"]
        structure = best["structure"]
        return cls(
            K=int(record["K"]),
            L=record["L"],
            p=float(record["p"]),
            verdict=record["verdict"],
            structure=structure["name"],
            key=structure["key"],
            rank=int(best["rank"]),
            value=float(best["objective"]),
            nc_value=float(record["nc_objective"]),
            lower_bound=float(record["lower_bound"]["value"]),
            gap=float(record["gap"]),
            certificate=Certificate(cert["kind"], cert.get("structure"), dict(cert)),
            closed_form=closed["expression"] if closed else None,
            matrix=np.array(best["Z"], dtype=float),
            lower_bound_kind=record["lower_bound"]["kind"],
            symmetry_order=int(structure["aut_order"]),
            vertex_transitive=bool(structure["vertex_transitive"]),
            start=best["start"],
            solver_success=bool(best["success"]),
            solver_message=best["message"],
            effort=int(record["effort"]),
            seed=int(record["seed"]),
            margin=float(best["margin"]),
            singular_values=tuple(best["singular_values"]),
            iterations=int(best["iterations"]),
            orbit_sizes=tuple(structure["orbit_sizes"]),
            equal_spectrum=bool(structure["equal_spectrum"]),
            symmetric=bool(structure["symmetric"]),
            cosines=tuple(structure["cosines"]),
            closed_form_value=closed["value"] if closed else None,
            named=tuple(NamedCode(**code) for code in record["named"]),
        )

    def to_record(self) -> dict[str, Any]:
        """The cell as the store keeps it: a JSON-ready nested dict (``best``: the matrix and its
        solve, ``best.structure``: its name and invariants; the inverse of ``from_record``)."""
        return {
            "K": self.K, "L": self.L, "p": self.p, "effort": self.effort, "seed": self.seed,
            "nc_objective": self.nc_value,
            "verdict": self.verdict,
            "certificate": dict(self.certificate.details),
            "best": {
                "objective": self.value, "p": self.p, "rank": self.rank, "margin": self.margin,
                "singular_values": list(self.singular_values), "start": self.start, "success": self.solver_success,
                "message": self.solver_message, "iterations": self.iterations, "Z": self.matrix.tolist(),
                "structure": {
                    "name": self.structure, "key": self.key, "rank": self.rank, "aut_order": self.symmetry_order,
                    "orbit_sizes": list(self.orbit_sizes), "vertex_transitive": self.vertex_transitive,
                    "equal_spectrum": self.equal_spectrum, "symmetric": self.symmetric, "cosines": list(self.cosines),
                },
            },
            "closed_form": None if self.closed_form is None
            else {"key": self.key, "expression": self.closed_form, "value": self.closed_form_value},
            "named": [asdict(code) for code in self.named],
            "lower_bound": {"value": self.lower_bound, "kind": self.lower_bound_kind},
            "gap": self.gap,
        }

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


@dataclass(frozen=True)
class CensusRun:
    """Where gradient descent from one seed ended (``gd_census.census_cell``): its final loss and
    steps, and, when it separated the classes, the raw GD objective :math:`S_p`, the objective of
    the local minimum it was polished to, that minimum's rank and name (``naming.identify``), the
    closed form's key ("" when unnamed) and the order of its symmetry group (None when it did not
    separate)."""

    seed: int
    separated: bool
    loss: float
    steps: int
    gd_objective: float | None = None
    objective: float | None = None
    rank: int | None = None
    name: str | None = None
    key: str | None = None
    aut_order: int | None = None


@dataclass(frozen=True)
class CensusCell:
    """One cell (K, L) of the GD census: the settings (``gd_census.gd_settings``: width ``d``, init
    ``scale``, step ``lr``, ``steps``, ``loss_target``; ``seeds`` initialisations), every seed's
    ``CensusRun``, how many separated seeds ended at each name (``frequencies``), the unseparated
    count, timings, and the mean relative move of the polish, (GD - polished) / polished.
    L counts weight matrices (N = L + 1 factors)."""

    K: int
    L: int
    d: int
    scale: float
    lr: float
    steps: int
    loss_target: float
    seeds: int
    runs: tuple[CensusRun, ...]
    frequencies: Mapping[str, int]
    unseparated: int
    gd_seconds: float
    seconds: float
    mean_relative_move: float

    @classmethod
    def from_record(cls, record: Mapping[str, Any]) -> CensusCell:
        """The cell a ``gd_census.census_cell`` record describes."""
        return cls(**{**record, "runs": tuple(CensusRun(**run) for run in record["runs"])})
