r"""The Python API: the package's three jobs from a notebook or a script, without a store to set up.

::

    import implicitbias as ib

    diagram = ib.phase_diagram(K=range(2, 9), L=range(1, 7))   # a PhaseDiagram of PhaseCells
    cell = diagram.cell(K=6, L=4)                               # typed, read by attribute
    ib.check("theorem-3.1").agrees                              # a theorem check as a test
    ib.forgetting_clocks("sgd", 0.05, batch_size=32, n_train=1000, epochs=10).total

Every function that computes takes ``store``: ``None`` (the default) is the session's temporary
store (``implicitbias.session``: results are cached for the life of the process, nothing is
written outside a temporary folder); a path (``str`` or ``Path``) is a persistent SQLite store,
opened and closed by the call; an open ``implicitbias.store.Store`` is used as it is.  Repeating
a call is a lookup, and a persistent store serves a result computed in an earlier session (by
the CLI too) as long as the code it depends on has not changed.

Results are typed objects read by attribute: ``PhaseCell``, ``PhaseDiagram``, ``Check``,
``Analysis``; the science layers' own results (``Clocks``, ``ModifiedFlow``, ``SpectralODE``,
``NCMetrics``) are returned as they are.  Bad input raises ``ParameterError`` (a ``ValueError``)
naming the parameter and what is allowed, with the checks and limits of the command line
(``implicitbias.theory.params``: numpy integers are integers, a bool must be a bool, sizes are
capped before anything is built, ``modified_flow`` has the limits of ``implicitbias flows``);
an error in a model factory or a data loader of your own is a ``UserCodeError`` naming it
(``implicitbias.validation.external``).

Depth convention everywhere: :math:`L` counts weight matrices; the features are one more factor,
:math:`N = L + 1`, and the Schatten exponent of :math:`P(K, L)` is :math:`p = 2/(L + 1)`.
Sources: Garrod, Keating, Thrampoulidis (ICML 2026; Spec A), Das, Beneventano, Dey, McKinley,
Poggio (arXiv 2605.29152; Spec B).
"""

from __future__ import annotations

import contextlib
import functools
import itertools
import numbers
import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from implicitbias.numerics.maxmargin.cells import Certificate, PhaseCell
from implicitbias.theory import params
from implicitbias.theory.clocks import forgetting_clocks  # the API's as it is: T_SGD, T_L2, T_adapt of a run
from implicitbias.theory.display import Tabular
from implicitbias.theory.params import ParameterError  # bad input, everywhere: a ValueError naming the parameter

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.axes import Axes
    from matplotlib.figure import FigureBase
    from numpy.typing import ArrayLike

    from implicitbias.claims import Claim, Result
    from implicitbias.numerics.metrics.nc_metrics import NCMetrics
    from implicitbias.store import Store
    from implicitbias.theory.modified_flow import ModifiedFlow
    from implicitbias.theory.spectral_ode import SpectralODE
    from implicitbias.validation.analysis import Group

__all__ = [
    "Certificate",
    "PhaseCell",
    "PhaseDiagram",
    "MarginProblem",
    "ParameterError",
    "Check",
    "SweepResult",
    "Analysis",
    "phase_diagram",
    "modified_flow",
    "forgetting_clocks",
    "singular_value_ode",
    "nc_metrics",
    "claims",
    "check",
    "sweep",
    "analyse",
    "open_store",
    "ImportedRuns",
    "import_runs",
]


@contextlib.contextmanager
def open_store(store: Store | str | os.PathLike | None = None) -> Iterator[Store]:
    """The store a call uses, as a context manager.

    Parameters
    ----------
    store : Store, str, os.PathLike or None
        ``None``: the session store (:func:`implicitbias.session.session_store`, temporary, shared
        by every call of this process); a path: the SQLite store at that path, created if missing
        and closed again when the ``with`` block ends; an open :class:`~implicitbias.store.Store`:
        used as it is (and left open).

    Yields
    ------
    Store
        The open store.

    Raises
    ------
    ParameterError
        ``store`` is neither ``None``, a path nor an open ``Store`` (a closed one included), or the
        path cannot hold a store (``StoreError``: a folder, a file that is not a store, a store of an
        incompatible layout).

    See Also
    --------
    implicitbias.store.Store : the store itself (cached, resumable, fingerprinted results).

    Examples
    --------
    >>> import implicitbias as ib
    >>> with ib.open_store() as store:        # the session's temporary store
    ...     store.path.name
    'session.sqlite'
    """
    from implicitbias.session import session_store
    from implicitbias.store import Store

    if store is None:
        yield session_store()
    elif isinstance(store, Store):
        if store.closed:
            raise params.ParameterError(
                f"store must be an open Store; {store.path} was closed (open it again, or pass its path)"
            )
        yield store
    elif isinstance(store, (str, os.PathLike)) and isinstance(os.fspath(store), str):
        with Store(store) as opened:
            yield opened
    else:
        raise params.ParameterError(
            "store must be None (the session store), the path of an SQLite file (str or Path) "
            f"or an open implicitbias.store.Store; got {_shown(store)}"
        )


def _shown(value: object) -> str:
    """``repr(value)`` cut to one short line, for messages."""
    text = " ".join(repr(value).split())
    return text if len(text) <= 80 else f"{text[:77]}..."


def _executor(executor: Executor | None) -> Executor | None:
    if executor is not None and not isinstance(executor, Executor):
        raise params.ParameterError(
            "executor must be None (this process) or a concurrent.futures.Executor, such as the one "
            f"implicitbias.executors.open_executor('process') opens; got {_shown(executor)}"
        )
    return executor


def _folder(name: str, out: str | os.PathLike | None) -> Path | None:
    """An output folder argument: None, or a folder path checked as the command line checks ``--out``."""
    from implicitbias.commands import output_folder

    if out is None:
        return None
    if not isinstance(out, (str, os.PathLike)) or not isinstance(os.fspath(out), str):
        raise params.ParameterError(f"{name} must be None or a folder path (str or Path), got {_shown(out)}")
    return output_folder(name, os.fspath(out))


# -- the phase diagram of P(K, L) ----------------------------------------------------------------


@dataclass(frozen=True, repr=False)
class PhaseDiagram(Tabular):
    r"""The cells of :math:`P(K, L)` over a grid of :math:`K` and :math:`L`, in :math:`(K, L)` order.

    ``to_frame()``: one row per cell; a notebook shows the grid, rows :math:`K` and columns
    :math:`L`, ``rR`` where NC is suboptimal (best rank R), ``NC`` where it is optimal, ``nc?``
    where it is the best found.

    Returned by :func:`phase_diagram`; iterating over it gives its :class:`PhaseCell`\ s.

    Attributes
    ----------
    cells : tuple of PhaseCell
        One typed cell per :math:`(K, L)` of the grid, sorted by :math:`K`, then :math:`L`.
    crossovers : tuple of Mapping
        Per column, the real depths where two structures optimal somewhere in it tie
        (``numerics.maxmargin.phase``).
    columns : tuple of Mapping
        The column records as computed (nested dicts, as ``implicitbias.atlas`` reads them).

    See Also
    --------
    phase_diagram : computes it.
    MarginProblem : one cell on its own.

    Examples
    --------
    >>> import implicitbias as ib
    >>> diagram = ib.phase_diagram(K=[2, 3, 4], L=[1, 3])
    >>> len(diagram), diagram.K, diagram.L
    (6, [2, 3, 4], [1, 3])
    >>> diagram.cell(K=2, L=3).verdict
    'NC optimal'
    """

    cells: tuple[PhaseCell, ...]
    crossovers: tuple[Mapping[str, Any], ...] = field(repr=False)
    columns: tuple[Mapping[str, Any], ...] = field(repr=False)

    def __iter__(self) -> Iterator[PhaseCell]:
        return iter(self.cells)

    def __len__(self) -> int:
        return len(self.cells)

    @property
    def K(self) -> list[int]:
        """The class counts :math:`K` of the grid, ascending."""
        return sorted({c.K for c in self.cells})

    @property
    def L(self) -> list[int | float]:
        """The depths :math:`L` of the grid (weight matrices), ascending."""
        return sorted({c.L for c in self.cells}, key=float)

    def cell(self, K: int, L: int | float) -> PhaseCell:
        """The cell :math:`(K, L)`.

        Parameters
        ----------
        K : int
            A class count of the grid (:attr:`K`).
        L : int or float
            A depth of the grid (:attr:`L`), compared as a float.

        Returns
        -------
        PhaseCell
            The cell.

        Raises
        ------
        ParameterError
            The diagram has no such cell (the message lists its :math:`K` and :math:`L`).
        """
        found = next((c for c in self.cells if c.K == K and float(c.L) == float(L)), None)
        if found is None:
            raise params.ParameterError(
                f"cell (K, L) must be one of the diagram's, K in {self.K} and L in {self.L}; got ({K}, {L})"
            )
        return found

    def boundary(self) -> dict[int, int | None]:
        """The phase boundary: per :math:`K`, the smallest integer :math:`L` at which NC is suboptimal.

        Returns
        -------
        dict of int to int or None
            :math:`K \\mapsto L^*(K)`; ``None`` where NC is never suboptimal on the grid's depths.

        Examples
        --------
        >>> import implicitbias as ib
        >>> ib.phase_diagram(K=[2, 4], L=[1, 2, 3]).boundary()
        {2: None, 4: 3}
        """
        from implicitbias.numerics.maxmargin.phase import boundary

        return {row["K"]: row["L_star"] for row in boundary(self.cells)}

    def rows(self) -> list[dict]:
        """One flat dict per cell (:meth:`PhaseCell.row`): the columns of :meth:`to_frame` and ``to_csv``.

        Returns
        -------
        list of dict
            One row per cell, in the order of :attr:`cells`.
        """
        return [c.row() for c in self.cells]

    def to_frame(self) -> pd.DataFrame:
        """:meth:`rows` as a pandas DataFrame, one row per cell.

        Returns
        -------
        pandas.DataFrame
            The columns of ``to_csv``.
        """
        import pandas as pd

        return pd.DataFrame(self.rows())

    def _display_frame(self) -> pd.DataFrame:
        """The grid: one row per K, one column per L, each cell's short verdict (``atlas.SHORT``)."""
        import pandas as pd

        from implicitbias.atlas import SHORT

        codes = {(c.K, c.L): SHORT[c.verdict].format(rank=c.rank) for c in self.cells}
        return pd.DataFrame([{"K \\ L": K, **{str(L): codes.get((K, L), "") for L in self.L}} for K in self.K])

    def _caption(self) -> str:
        counts = {v: sum(c.verdict == v for c in self.cells) for v in dict.fromkeys(c.verdict for c in self.cells)}
        return f"PhaseDiagram of P(K, L), {len(self)} cells: " + ", ".join(f"{n} {v}" for v, n in counts.items())

    def __repr__(self) -> str:
        return f"PhaseDiagram(K={self.K}, L={self.L}, cells={len(self)})"

    def plot(
        self,
        path: str | os.PathLike | None = None,
        *,
        ax: Axes | Sequence[Axes] | FigureBase | None = None,
        panels: Sequence[str] = ("verdict", "rank", "gap"),
    ) -> FigureBase:
        """The verdict, rank and gap heatmaps over :math:`(K, L)` at integer :math:`L`.

        The package never changes the matplotlib backend.

        Parameters
        ----------
        path : str, os.PathLike or None
            Where to save the figure as PNG, with a CSV of the plotted numbers beside it; ``None``:
            not saved.
        ax : Axes, sequence of Axes, Figure, SubFigure or None
            ``None``: a new ``matplotlib.figure.Figure``, outside pyplot (a notebook shows it when it
            is a cell's value); a ``Figure`` or ``SubFigure`` to draw into; or your own Axes, one per
            panel (``fig, axes = plt.subplots(1, 3); diagram.plot(ax=axes)``).
        panels : sequence of str
            Which of ``verdict``, ``rank``, ``gap`` to draw, in order.

        Returns
        -------
        matplotlib.figure.FigureBase
            The figure drawn into.

        Raises
        ------
        ParameterError
            ``ax`` or ``panels`` of the wrong kind.
        """
        from implicitbias.atlas import heatmap_figure
        from implicitbias.figures import save_figure

        fig, columns = heatmap_figure(self.cells, ax=ax, panels=panels)
        if path is not None:
            save_figure(fig.figure, Path(path), columns)
        return fig

    def write_atlas(self, out: str | os.PathLike) -> dict[str, Path]:
        """Write every output of ``implicitbias phase`` (the atlas) into a folder.

        Parameters
        ----------
        out : str or os.PathLike
            The folder (created if missing).

        Returns
        -------
        dict of str to pathlib.Path
            The files written, by name.
        """
        from implicitbias.atlas import write_outputs

        return write_outputs(list(self.columns), Path(out))


def _values(name: str, values: int | float | Iterable, kind: Callable, limit: int) -> list:
    """One number (numpy's too) or an iterable of at most ``limit`` of them, each checked by
    ``kind``; only ``limit + 1`` items are ever read, so ``range(2, 10**12)`` is refused at once."""
    if isinstance(values, numbers.Number):
        items = [values]
    elif isinstance(values, Iterable) and not isinstance(values, (str, bytes, Mapping)):
        items = list(itertools.islice(values, limit + 1))
    else:
        raise params.ParameterError(f"{name} must be a number or an iterable of numbers, got {_shown(values)}")
    if not items:
        raise params.ParameterError(f"{name} must hold at least one value, got none")
    if len(items) > limit:
        raise params.ParameterError(f"{name} must hold at most {limit} values (the grid has at most {limit} cells)")
    return [kind(name, v) for v in items]


def phase_diagram(
    K: int | Iterable[int] = range(2, 17),
    L: int | float | Iterable[int | float] = range(1, 13),
    *,
    effort: int = 1,
    seed: int = 0,
    store: Store | str | os.PathLike | None = None,
    executor: Executor | None = None,
    progress: bool = False,
) -> PhaseDiagram:
    r"""Where neural collapse stops being optimal: every cell :math:`(K, L)` of :math:`P(K, L)`.

    The max-margin problem of the deep unconstrained-feature model (Spec A, section 3) is

    .. math::

        P(K, L):\quad \min_{\bar Z \in \mathbb{R}^{K \times K}} \; S_p(\bar Z) = \sum_i \sigma_i(\bar Z)^p,
        \qquad p = \frac{2}{L + 1},

        \text{subject to } \bar Z_{kk} - \bar Z_{ck} \ge 1 \;\; (c \ne k).

    Neural collapse (the simplex ETF) has :math:`S_p = K - 1` at every depth.  The grid is computed
    per :math:`K` (one column, all depths) in two cached passes, as ``implicitbias phase`` does; at
    effort 1 and up to 32 classes a cell's value does not depend on the other depths asked for.  Above
    32 classes a column is searched by the rank-r route (``numerics.maxmargin.low_rank``: factorised
    codes, a smooth soft-min of the margins, each depth's best finished with the exact margins),
    minutes for :math:`K = 100`; its cells are named from cheap invariants (``symmetry_order`` 0: not
    computed).

    Parameters
    ----------
    K : int or iterable of int
        Class counts, each :math:`\ge 2`.
    L : int, float or iterable of them
        Depths, reals :math:`\ge 1`; :math:`L` counts weight matrices (:math:`N = L + 1` factors).
    effort : int
        Search effort: the number of random starts grows with it.  From 2 on, columns of 17 to 32
        classes also run the rank-r route and keep the better code per depth (above 16 classes the
        effort-1 column is an upper bound that more effort beats in about a quarter of the cells).
    seed : int
        Seed of the random starts.
    store : Store, str, os.PathLike or None
        Where results are cached (see :func:`open_store`); ``None`` is the session store.
    executor : concurrent.futures.Executor or None
        Runs the columns in parallel, e.g.
        :func:`implicitbias.executors.open_executor("process") <implicitbias.executors.open_executor>`;
        ``None`` runs them in this process.
    progress : bool
        Show a progress bar.

    Returns
    -------
    PhaseDiagram
        The typed cells, the crossovers and the column records.

    Raises
    ------
    ParameterError
        A :math:`K` below 2 or not an integer, an :math:`L` below 1, an empty list, or a grid of
        more than ``MAX_CELLS`` cells.

    See Also
    --------
    MarginProblem : one cell, and the objective of any matrix.
    PhaseCell : what each cell holds.

    Examples
    --------
    >>> import implicitbias as ib
    >>> diagram = ib.phase_diagram(K=[2, 4], L=[1, 3])
    >>> [(c.K, c.L, c.verdict, c.rank) for c in diagram]  # doctest: +NORMALIZE_WHITESPACE
    [(2, 1, 'NC optimal', 1), (2, 3, 'NC optimal', 1),
     (4, 1, 'NC optimal', 3), (4, 3, 'NC suboptimal', 2)]
    >>> round(diagram.cell(K=4, L=3).value, 4)  # below NC's K - 1 = 3
    2.8284
    """
    from implicitbias.numerics.maxmargin.phase import MAX_CELLS, cells_of, column_config
    from implicitbias.numerics.maxmargin.phase import phase_diagram as compute
    from implicitbias.numerics.maxmargin.solver import MAX_DIMENSION

    Ks = sorted(set(_values("K", K, lambda n, v: params.integer(n, v, minimum=2, maximum=MAX_DIMENSION), MAX_CELLS)))
    Ls = sorted(set(_values("L", L, lambda n, v: params.real(n, v, minimum=1, maximum=10_000), MAX_CELLS)))
    if len(Ks) * len(Ls) > MAX_CELLS:
        raise params.ParameterError(f"grid must have at most {MAX_CELLS} cells, got {len(Ks) * len(Ls)}")
    configs = [column_config(k, Ls, effort, seed) for k in Ks]
    executor, progress = _executor(executor), params.boolean("progress", progress)
    with open_store(store) as opened:
        columns = compute(functools.partial(opened.map, executor=executor, progress=progress), configs)
    cells = tuple(cells_of(columns))
    crossovers = tuple(x for col in columns for x in col["crossovers"])
    return PhaseDiagram(cells, crossovers, tuple(columns))


@dataclass(frozen=True)
class MarginProblem:
    r"""The deep-UFM max-margin problem :math:`P(K, L)` of one cell (Spec A, section 1).

    .. math::

        \min_{\bar Z \in \mathbb{R}^{K \times K}} S_p(\bar Z) = \sum_i \sigma_i(\bar Z)^p,
        \quad p = \frac{2}{L + 1},

        \text{subject to } \bar Z_{kk} - \bar Z_{ck} \ge 1 \; (c \ne k).

    Parameters
    ----------
    K : int
        The number of classes, :math:`\ge 2`.
    L : int or float
        The depth, a real :math:`\ge 1`; :math:`L` counts weight matrices (:math:`N = L + 1` factors).

    Raises
    ------
    ParameterError
        :math:`K < 2` or not an integer, or :math:`L < 1`.

    See Also
    --------
    phase_diagram : a grid of such problems.

    Examples
    --------
    >>> import numpy as np
    >>> import implicitbias as ib
    >>> problem = ib.MarginProblem(K=4, L=3)
    >>> problem.p, problem.nc_value
    (0.5, 3.0)
    >>> etf = (np.eye(4) - 1 / 4) * 4 / 4   # the simplex ETF at unit margin
    >>> round(problem.objective(etf), 10)    # NC's value K - 1
    3.0
    """

    K: int
    L: int | float

    def __post_init__(self) -> None:
        from implicitbias.numerics.maxmargin.solver import MAX_DIMENSION

        params.integer("K", self.K, minimum=2, maximum=MAX_DIMENSION)
        params.real("L", self.L, minimum=1, maximum=10_000)

    @property
    def p(self) -> float:
        """The Schatten exponent :math:`p = 2/(L + 1)`."""
        from implicitbias.numerics.maxmargin.margin import schatten_exponent

        return schatten_exponent(self.L)

    @property
    def nc_value(self) -> float:
        """:math:`S_p` of the simplex ETF at unit margin: :math:`K - 1` at every depth."""
        return float(self.K - 1)

    def objective(self, Z: ArrayLike) -> float:
        """:math:`S_p` of a matrix rescaled to unit margin.

        Parameters
        ----------
        Z : array_like
            Any separating :math:`K \\times K` matrix (:math:`Z_{kk} > Z_{ck}`).

        Returns
        -------
        float
            :math:`S_p(Z / m)` with :math:`m = \\min_{c \\ne k} (Z_{kk} - Z_{ck})` its margin.

        Raises
        ------
        ParameterError
            ``Z`` is not a :math:`K \\times K` matrix of finite reals, or does not separate the classes.
        """
        from implicitbias.numerics.maxmargin.margin import margins
        from implicitbias.numerics.maxmargin.solver import verify

        what = f"a {self.K} x {self.K} matrix of finite real numbers"
        matrix = params.real_array("Z", Z, ndim=2, what=what)
        if matrix.shape != (self.K, self.K):
            raise params.ParameterError(f"Z must be {what}, got shape {matrix.shape}")
        if not margins(matrix).min() > 0:
            raise params.ParameterError(
                "Z must separate the classes (every margin Z_kk - Z_ck > 0, c != k), got a "
                f"smallest margin of {margins(matrix).min():.3g}"
            )
        return verify(matrix, self.p).objective

    def solve(self, *, effort: int = 1, seed: int = 0, store: Store | str | os.PathLike | None = None) -> PhaseCell:
        """The global search, verdict and certificate of this cell (:func:`phase_diagram` of one cell).

        Parameters
        ----------
        effort, seed, store
            As for :func:`phase_diagram`.

        Returns
        -------
        PhaseCell
            The cell :math:`(K, L)`.
        """
        return phase_diagram(self.K, self.L, effort=effort, seed=seed, store=store).cells[0]


# -- derivations and metrics: the science layers' own objects -----------------------------------


def modified_flow(
    optimizer: str, order: int = 1, *, dim: int = 1, l2: bool = False, minibatches: int = 1
) -> ModifiedFlow:
    r"""The modified flow of an optimiser to a given order in the step size :math:`h`, derived with sympy.

    Backward error analysis: the continuous flow whose time-:math:`h` map matches one step of the
    update to :math:`O(h^{\text{order}+1})`,

    .. math::

        \frac{d\theta}{dt} = f_0(\theta) + h f_1(\theta) + \dots + h^{\text{order}} f_{\text{order}}(\theta),

    found by Taylor matching.  For gradient descent,
    :math:`\dot\theta = -\nabla L - \tfrac{h}{2} \nabla^2 L \, \nabla L + O(h^2)`.

    Parameters
    ----------
    optimizer : str
        A name of ``theory.updates.UPDATES`` (``gd``, ``heavy_ball``, ``nesterov``, ``rmsprop``,
        ``adam``, ``adamw``, ``sign``, ``muon``) or ``sgd``.
    order : int
        The highest power of :math:`h` kept.
    dim : int
        The dimension of :math:`\theta`.
    l2 : bool
        Add coupled weight decay.
    minibatches : int
        More than 1: SGD with random reshuffling over that many minibatches.

    Returns
    -------
    ModifiedFlow
        The flow's terms :math:`f_0, \dots, f_{\text{order}}`; ``.latex()`` prints it.

    Raises
    ------
    ParameterError
        An unknown optimiser, or an order, dimension or minibatch count beyond what derives in
        bounded time: the limits of ``implicitbias flows`` (``commands.flows.MAX_ORDER``).

    Examples
    --------
    >>> import implicitbias as ib
    >>> flow = ib.modified_flow("gd", order=1)
    >>> len(flow.terms)                 # f_0 and f_1
    2
    """
    from implicitbias.commands.flows import check_order
    from implicitbias.theory.modified_flow import modified_flow as derive
    from implicitbias.theory.updates import builtin

    order = check_order(optimizer, order, dim, minibatches, l2)  # the limits of ``implicitbias flows``
    return derive(builtin(optimizer, l2=l2, minibatches=minibatches), order=order, dim=dim)


def singular_value_ode(K: int, L: int, *, n: int = 1, balanced: bool = True) -> SpectralODE:
    r"""The singular-value ODE of the deep UFM under Hadamard initialisation (Spec A, section 4).

    With balanced factors, each singular value :math:`S_j` of the logits follows

    .. math::

        \frac{dS_j}{dt} = \frac{N}{K\sqrt{n}} \, S_j^{\,2 - 2/N} \, (1 - g_j),

    where :math:`g_j` is the :math:`j`-th Hadamard coefficient of the softmax and :math:`N = L + 1`.

    Parameters
    ----------
    K : int
        The number of classes, a power of two.
    L : int
        The number of weight matrices (:math:`N = L + 1` factors with the features).
    n : int
        Samples per class.
    balanced : bool
        Balanced initialisation (the closed form above); ``False`` keeps each factor's scale.

    Returns
    -------
    SpectralODE
        The right-hand side; integrate it with
        :func:`implicitbias.numerics.ufm.spectral_flow.integrate`.

    Raises
    ------
    ParameterError
        :math:`K` not a power of two, or :math:`L` or :math:`n` out of range.

    Examples
    --------
    >>> import implicitbias as ib
    >>> ode = ib.singular_value_ode(K=4, L=2)
    >>> ode.K, ode.L
    (4, 2)
    """
    from implicitbias.theory.spectral_ode import SpectralODE

    return SpectralODE(K, L, n, balanced)


def nc_metrics(
    features: ArrayLike,
    labels: ArrayLike,
    classifier: ArrayLike | None = None,
    bias: ArrayLike | None = None,
    *,
    convention: str = "package",
) -> NCMetrics:
    r"""The neural-collapse metrics NC1-NC4 of a layer's features (Papyan, Han, Donoho 2020).

    NC1 is :math:`\operatorname{tr}(\Sigma_W \Sigma_B^{+}) / K` (within-class variability against
    the between-class spread), NC2 the distance of the centred class means from a simplex ETF, NC3
    the distance between the normalised classifier and the normalised class means (self-duality),
    NC4 the disagreement of the classifier with the nearest-class-mean rule.

    Parameters
    ----------
    features : array_like
        The features :math:`H`, ``n_samples x d``.
    labels : array_like
        One integer label in :math:`0, \dots, K-1` per row.
    classifier : array_like or None
        The :math:`K \times d` last-layer weights :math:`W`.  ``None``: :math:`W` is the matrix of
        centred class means, so NC3 is 0 by construction and NC4 compares the nearest-class-mean
        rule with itself; pass the trained classifier to measure them.
    bias : array_like or None
        The classifier's :math:`K` biases.
    convention : str
        ``package`` (the default) or ``papyan``, which reproduces Papyan, Han and Donoho's published
        code (NC3 squared, equinorm with ddof 1; ``numerics.metrics.nc_metrics`` lists the
        differences).

    Returns
    -------
    NCMetrics
        NC1-NC4 and the numbers they are made of.

    Raises
    ------
    ParameterError
        Features that are not a matrix, or labels that are not one integer :math:`\ge 0` per row.

    Examples
    --------
    >>> import numpy as np
    >>> import implicitbias as ib
    >>> means = np.eye(3) - 1 / 3                       # a simplex ETF, K = 3
    >>> labels = np.repeat([0, 1, 2], 5)
    >>> metrics = ib.nc_metrics(means[labels], labels)  # every sample at its class mean
    >>> round(metrics.nc1, 12), round(metrics.nc2, 12)
    (0.0, 0.0)
    """
    from implicitbias.numerics.metrics.nc_metrics import CONVENTIONS, class_mean_rows
    from implicitbias.numerics.metrics.nc_metrics import nc_metrics as metrics

    params.choice("convention", convention, CONVENTIONS)
    H = params.real_array("features", features, ndim=2, what="an n_samples x d matrix of finite real numbers")
    if not len(H):
        raise params.ParameterError("features must hold at least one sample (row), got none")
    y = params.real_array("labels", labels, ndim=1, what="one integer label per row of features", integer=True)
    if len(y) != len(H) or not len(y) or y.min() < 0:
        raise params.ParameterError(
            f"labels must hold one integer >= 0 per row of features: {len(y)} labels "
            f"for {len(H)} rows" + (f", smallest {y.min()}" if len(y) else "")
        )
    classes = np.unique(y)
    if classifier is None:
        K = int(classes[-1]) + 1
        if K < 2 or len(classes) != K:
            raise params.ParameterError(
                f"labels must hold every class 0..K-1 (K = the largest label + 1 = {K}, at least 2) at least once; "
                f"{K - len(classes)} of them have no sample"
                if K >= 2
                else "labels must hold at least 2 classes"
            )
        means = class_mean_rows(H, y, K)
        W = means - means.mean(axis=0)
    else:
        W = params.real_array("classifier", classifier, ndim=2, what="a K x d matrix of finite real numbers")
        K = len(W)
        if W.shape[1] != H.shape[1] or K < 2:
            raise params.ParameterError(
                f"classifier must be a K x d matrix, K >= 2 classes and d = {H.shape[1]} "
                f"columns as features, got shape {W.shape}"
            )
        if classes[-1] >= K or len(classes) != K:
            raise params.ParameterError(
                f"labels must hold every class 0..{K - 1} of the classifier's {K} rows at least "
                f"once, got {len(classes)} classes up to {classes[-1]}"
            )
    b = (
        None
        if bias is None
        else params.real_array("bias", bias, ndim=1, what=f"{K} finite real numbers (one per class)")
    )
    if b is not None and b.shape != (K,):
        raise params.ParameterError(f"bias must hold {K} finite real numbers (one per class), got {len(b)}")
    return metrics(H, y, W, b, convention=convention)


# -- claims --------------------------------------------------------------------------------------


def claims() -> dict[str, Claim]:
    """Every claim of the two specs by its slug, in report order.

    Returns
    -------
    dict of str to Claim
        ``theorem-3.1``, ``c1``, ... to the claim objects (statement, source, thresholds, rule).

    See Also
    --------
    check : measures and judges one claim.

    Examples
    --------
    >>> import implicitbias as ib
    >>> known = ib.claims()
    >>> "theorem-3.1" in known and "c7" in known
    True
    """
    from implicitbias.claims import by_slug

    return by_slug()


_SEVERITY = ("disagrees", "inconclusive", "not run", "agrees")


def _results_frame(results: Iterable[Result]) -> pd.DataFrame:
    """One row per judged result: claim slug, data set label, check run, verdict, measured, reason."""
    import pandas as pd

    return pd.DataFrame(
        [
            {
                "slug": r.claim.slug,
                "label": r.evidence.label,
                "check": r.evidence.check,
                "verdict": r.verdict.verdict,
                "measured": r.verdict.measured,
                "reason": r.verdict.reason,
            }
            for r in results
        ],
        columns=["slug", "label", "check", "verdict", "measured", "reason"],
    )


@dataclass(frozen=True, repr=False)
class Check(Tabular):
    """A claim judged: one ``Result`` per data set it is judged on (usually one).

    Returned by :func:`check`.  ``verdict`` is the most severe of its verdicts (disagrees,
    inconclusive, not run, agrees); ``agrees`` is true when every data set agrees, so
    ``assert ib.check(slug).agrees`` is a test.  ``to_frame()``: one row per result (slug, label,
    check, verdict, measured, reason).

    Attributes
    ----------
    slug : str
        The claim's slug.
    claim : Claim
        The claim object.
    results : tuple of Result
        One judged result (evidence and verdict) per data set.

    See Also
    --------
    check : makes it.
    """

    slug: str
    claim: Claim = field(repr=False)
    results: tuple[Result, ...] = field(repr=False)

    def verdicts(self) -> dict[str, str]:
        """The verdict of each data set judged (as :meth:`Analysis.verdicts`: names to verdict words).

        Returns
        -------
        dict of str to str
            Data set label (the claim's slug for a claim judged on one) to verdict.
        """
        return {r.evidence.label or self.slug: r.verdict.verdict for r in self.results}

    @property
    def verdict(self) -> str:
        """The most severe verdict: disagrees, then inconclusive, then not run, then agrees."""
        return min((r.verdict.verdict for r in self.results), key=_SEVERITY.index)

    @property
    def agrees(self) -> bool:
        """Whether every data set agrees."""
        return all(r.verdict.verdict == "agrees" for r in self.results)

    @property
    def reason(self) -> str:
        """Why the rule decided so, per data set."""
        return "; ".join(
            f"{r.evidence.label}: {r.verdict.reason}" if r.evidence.label else r.verdict.reason for r in self.results
        )

    @property
    def measured(self) -> str:
        """The numbers the rule read, per data set."""
        return "; ".join(r.verdict.measured for r in self.results)

    def __str__(self) -> str:
        return f"{self.slug}: {self.verdict} ({self.measured}): {self.reason}"

    def __repr__(self) -> str:
        return f"Check({self.slug!r}, verdict={self.verdict!r}, results={len(self.results)})"

    def to_frame(self) -> pd.DataFrame:
        return _results_frame(self.results)

    def _caption(self) -> str:
        return f"Check {self.slug}: {self.verdict}"


def check(
    slug: str,
    *,
    tier: str = "default",
    store: Store | str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    executor: Executor | None = None,
    progress: bool = False,
) -> Check:
    """Measure and judge one claim.

    Parameters
    ----------
    slug : str
        The claim's slug, a key of :func:`claims` (e.g. ``theorem-4.3``).
    tier : str
        ``default`` (minutes on a CPU), ``gpu`` or ``full``: the size of the measurement.
    store : Store, str, os.PathLike or None
        Where results are cached (see :func:`open_store`).
    out : str, os.PathLike or None
        Where the claim's figures go; ``None``: a temporary folder.
    executor : concurrent.futures.Executor or None
        Runs the claim's cells in parallel.
    progress : bool
        Show a progress bar.

    Returns
    -------
    Check
        The verdict, what was measured and why the rule decided so.

    Raises
    ------
    ParameterError
        An unknown slug or tier (the message lists the known ones), or arguments of the wrong type.
    implicitbias.claims.judging.ClaimError
        The claim's computation raised: one line naming the claim and the cause (chained), as
        ``implicitbias verify`` and the report say it (they judge through the same function,
        ``implicitbias.claims.judging.judge_claim``).

    See Also
    --------
    claims : every claim by slug.

    Examples
    --------
    >>> import implicitbias as ib
    >>> result = ib.check("bea-gd")   # gradient descent's first-order correction, derived with sympy
    >>> result.verdict, result.measured
    ('agrees', 'c = 1/4')
    """
    from implicitbias.claims import TIERS, Context
    from implicitbias.claims.judging import judge_claim

    known = claims()
    params.choice("slug", slug, list(known))
    params.choice("tier", tier, TIERS)
    out, executor, progress = _folder("out", out), _executor(executor), params.boolean("progress", progress)
    with open_store(store) as opened:
        judgement = judge_claim(
            known[slug], Context(store=opened, out=out, tier=tier, executor=executor, progress=progress)
        )
    judgement.raise_error()
    return Check(slug, known[slug], judgement.results)


# -- Spec B: sweeps and their analysis ----------------------------------------------------------


class _RunsTable(Tabular):
    """A table of finished runs, ``runs`` its (config, record) pairs: ``to_frame()`` their per-epoch
    histories in long format (run, epoch, metric, value; nested values such as the clocks named
    ``clocks.T_SGD``), ``runs_frame()`` one row per run, its config and status; a notebook shows the
    runs with the config values that vary and the final test accuracy."""

    runs: Any  # (config, record) pairs, defined by each result

    @property
    def diverged(self) -> int:
        """The number of runs that diverged."""
        return sum(r["status"] == "diverged" for _, r in self.runs)

    def to_frame(self) -> pd.DataFrame:
        """Every run's history, one row per (run, epoch, metric) with a numeric value."""
        import pandas as pd

        rows = [
            {"run": run, "epoch": epoch["epoch"], "metric": metric, "value": value}
            for run, (_, record) in enumerate(self.runs)
            for epoch in record["history"]
            for metric, value in _flat(epoch).items()
            if metric != "epoch"
        ]
        return pd.DataFrame(rows, columns=["run", "epoch", "metric", "value"])

    def runs_frame(self) -> pd.DataFrame:
        """One row per run: its index ``run``, its config (nested values flattened) and ``status``."""
        import pandas as pd

        return pd.DataFrame(
            [{"run": i, **_flat(c, numeric=False), "status": r["status"]} for i, (c, r) in enumerate(self.runs)]
        )

    def _display_frame(self) -> pd.DataFrame:
        """``runs_frame()`` with the config values that vary across runs and the final test accuracy."""
        runs = self.runs_frame()
        varying = [c for c in runs.columns[1:-1] if runs[c].astype(str).nunique() > 1]
        final = [r["history"][-1].get("test_acc") if r["history"] else None for _, r in self.runs]
        return runs[["run", *varying, "status"]].assign(final_test_acc=final)


@dataclass(frozen=True, repr=False)
class SweepResult(_RunsTable):
    """A finished sweep: its expanded spec and one run record per run, in spec order.

    ``to_frame()``: the runs' per-epoch histories in long format (run, epoch, metric, value; ``run``
    indexes ``spec.configs``, nested values such as the clocks are named ``clocks.T_SGD``);
    ``runs_frame()``: one row per run, its config and status.  A notebook shows the runs.

    Returned by :func:`sweep`; :func:`analyse` judges it.

    Attributes
    ----------
    spec : implicitbias.validation.sweep.Spec
        The expanded spec (``spec.configs``: one config per run).
    records : tuple of Mapping
        One record per run: ``status``, ``summary`` and the per-epoch ``history``.

    See Also
    --------
    sweep : makes it (its example shows one).
    """

    spec: Any  # implicitbias.validation.sweep.Spec
    records: tuple[Mapping[str, Any], ...] = field(repr=False)

    @property
    def runs(self) -> list[tuple[dict, Mapping[str, Any]]]:
        """(config, record) pairs, as :func:`analyse` reads them."""
        return list(zip(self.spec.configs, self.records, strict=True))

    def _caption(self) -> str:
        return f"SweepResult {self.spec.name}: {len(self.records)} runs, {self.diverged} diverged"

    def __repr__(self) -> str:
        return f"SweepResult({self.spec.name!r}, runs={len(self.records)}, diverged={self.diverged})"


def _flat(values: Mapping[str, Any], prefix: str = "", numeric: bool = True) -> dict[str, Any]:
    """A nested mapping as one level, keys joined by a dot; with ``numeric``, only its numbers
    (booleans and None left out), else every value."""
    out: dict[str, Any] = {}
    for key, value in values.items():
        if isinstance(value, Mapping):
            out.update(_flat(value, f"{prefix}{key}.", numeric))
        elif not numeric or (isinstance(value, (int, float)) and not isinstance(value, bool)):
            out[f"{prefix}{key}"] = value
    return out


def sweep(
    spec: str | os.PathLike | Mapping | Any,
    *,
    store: Store | str | os.PathLike | None = None,
    executor: Executor | None = None,
    progress: bool = False,
    options: Mapping[str, Any] | None = None,
) -> SweepResult:
    r"""Train every run of a sweep that the store does not hold yet (``implicitbias sweep``).

    A run trains one network from initial weight scale :math:`\sigma_w` and records, per epoch,
    its accuracies, weight norms and the forgetting clocks (see :func:`forgetting_clocks`).

    Parameters
    ----------
    spec : str, os.PathLike, Mapping or Spec
        A TOML path, a packaged spec name such as ``tiny``, or the parsed table (``base``,
        ``[[grid]]`` blocks, ``options``).  Its ``arch`` and ``dataset`` may name a model factory
        and a data loader of your own, ``"package.module:function"``
        (``implicitbias.validation.external``).  Or an expanded spec whose data were checked
        (``SweepResult.spec``, ``implicitbias.validation.sweep.check_data``): it is run as it is.
    store : Store, str, os.PathLike or None
        Where runs are cached; what is in it is not rerun (see :func:`open_store`).
    executor : concurrent.futures.Executor or None
        Runs the runs in parallel.
    progress : bool
        Show a progress bar.
    options : Mapping or None
        Runtime options over the spec's own (``threads``, ``device``, ``batched``, ...: the spec's
        ``[options]``, ``implicitbias.validation.sweep.OPTION_KEYS``), checked as the spec's are.

    Returns
    -------
    SweepResult
        The expanded spec and every run's record.

    Raises
    ------
    ParameterError
        A spec that cannot be read or expanded, or data that cannot be loaded.

    See Also
    --------
    analyse : judges Spec B's claims on the runs.

    Examples
    --------
    >>> import implicitbias as ib
    >>> spec = {"name": "doc", "options": {"threads": 1},
    ...         "base": {"dataset": "synthetic", "data_size": 100, "arch": "mlp", "epochs": 1,
    ...                  "batch_size": 25, "sigma_w": [0.5, 2.0], "seed": 0,
    ...                  "optimizer": "sgd", "lr": 0.05}}
    >>> run = ib.sweep(spec)
    >>> len(run.records), run.diverged
    (2, 0)
    """
    from implicitbias.validation.sweep import Spec, check_data, load_spec, run_sweep, with_options

    if not isinstance(spec, Spec):
        _spec_argument("spec", spec)
    if options is not None and not isinstance(options, Mapping):
        raise params.ParameterError(
            f"options must be None or a table of runtime options (a dict), got {_shown(options)}"
        )
    executor, progress = _executor(executor), params.boolean("progress", progress)
    loaded = with_options(spec if isinstance(spec, Spec) else check_data(load_spec(spec)), options or {})
    with open_store(store) as opened:
        records = run_sweep(loaded, opened, executor=executor, progress=progress)
    return SweepResult(loaded, tuple(records))


def _spec_argument(name: str, spec: object) -> None:
    """A sweep spec argument must be a TOML path (str or Path), a packaged spec name or a parsed table."""
    if not (isinstance(spec, Mapping) or isinstance(spec, (str, os.PathLike)) and isinstance(os.fspath(spec), str)):
        raise params.ParameterError(
            f"{name} must be a TOML path (str or Path), a packaged spec name such as 'tiny' "
            f"or the parsed table (a dict); got {_shown(spec)}"
        )


@dataclass(frozen=True, repr=False)
class ImportedRuns(_RunsTable):
    """Runs trained elsewhere, read from a file in the run format and put in a store.

    Returned by :func:`import_runs` (``implicitbias import``); :func:`analyse` judges it.
    ``to_frame()``: the runs' per-epoch histories in long format (run, epoch, metric, value);
    ``runs_frame()``: one row per run.  A notebook shows the runs.

    Attributes
    ----------
    path : pathlib.Path
        The file read.
    runs : tuple of (dict, Mapping)
        (config, record) pairs, as :func:`analyse` reads them.
    clocks : str
        How their clocks were obtained (recorded per step, or reconstructed from a schedule), in
        one sentence.

    See Also
    --------
    import_runs : makes it.
    ForgettingMeter : records runs in your own training loop.
    """

    path: Path
    runs: tuple[tuple[dict, Mapping[str, Any]], ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def clocks(self) -> str:
        from implicitbias.validation.runs_format import clocks_line

        return clocks_line(self.runs)

    def _caption(self) -> str:
        return f"ImportedRuns {self.path.name}: {len(self)} runs, {self.diverged} diverged. {self.clocks}"

    def __repr__(self) -> str:
        return f"ImportedRuns({self.path.name!r}, runs={len(self)}, diverged={self.diverged})"


def import_runs(path: str | os.PathLike, *, store: Store | str | os.PathLike | None = None) -> ImportedRuns:
    """Import runs trained elsewhere (``implicitbias import``).

    Reads a CSV, Parquet or JSON-lines file in the run format (one row per run and epoch;
    :mod:`implicitbias.validation.runs_format`), checks every value and puts the runs in ``store``,
    where :func:`analyse` and ``implicitbias analyse`` judge C1-C7 on them beside the package's
    own runs.

    Parameters
    ----------
    path : str or os.PathLike
        The file: ``.csv``, ``.parquet`` (needs pyarrow) or ``.jsonl``.
    store : Store, str, os.PathLike or None
        Where the runs are put (see :func:`open_store`).

    Returns
    -------
    ImportedRuns
        The runs read, with how their clocks were obtained.

    Raises
    ------
    ParameterError
        A file that cannot be read, or a value out of the format, named by file, row and column.

    See Also
    --------
    analyse : judges the runs.
    ForgettingMeter : records runs in your own training loop.
    """
    from implicitbias.validation.runs_format import import_runs as put_runs

    if not isinstance(path, str | os.PathLike):
        raise params.ParameterError(f"path must be the path of a CSV, Parquet or JSON-lines file, got {path!r}")
    with open_store(store) as opened:
        pairs = put_runs(path, opened)
    return ImportedRuns(Path(path), tuple(pairs))


@dataclass(frozen=True, repr=False)
class Analysis(Tabular):
    r"""Spec B's claims C1-C7 judged on a sweep's runs (``implicitbias analyse``).

    ``to_frame()``: one row per result (slug, label, check, verdict, measured, reason);
    ``groups_frame()``: one row per group and :math:`\sigma_w`.

    Returned by :func:`analyse`.

    Attributes
    ----------
    groups : tuple of Group
        The runs grouped by setting (everything but :math:`\sigma_w` and the seed).
    results : tuple of Result
        One judged result per claim and data set.
    markdown : str
        The analysis as the CLI writes it.
    title : str
        What was analysed: the sweep or file and how many of its runs are finished.

    See Also
    --------
    analyse : makes it (its example shows one).
    """

    groups: tuple[Group, ...] = field(repr=False)
    results: tuple[Result, ...] = field(repr=False)
    markdown: str = field(repr=False)
    title: str = ""

    def verdicts(self) -> dict[str, str]:
        """The verdict of each claim (as :meth:`Check.verdicts`: names to verdict words).

        Returns
        -------
        dict of str to str
            Claim slug to verdict.
        """
        return {r.claim.slug: r.verdict.verdict for r in self.results}

    def to_frame(self) -> pd.DataFrame:
        return _results_frame(self.results)

    def groups_frame(self) -> pd.DataFrame:
        """One row per group and sigma_w: the group's ``label``, ``optimizer``, ``sigma_w``, the seed
        mean of the selected test accuracy (points) at it, and the group's spread of those means
        (``spread``, bootstrap CI ``spread_lo``/``spread_hi``), ``governing`` clock and its value
        ``clock`` (``validation.analysis.summarise``)."""
        import pandas as pd

        from implicitbias.validation.analysis import mean_by_sigma, summarise

        rows = []
        for group in self.groups:
            summary = summarise(group)
            spread, governing = summary.spread_selected, summary.governing
            common = {
                "label": summary.label,
                "optimizer": summary.setting["optimizer"],
                "spread": spread.estimate,
                "spread_lo": spread.lo,
                "spread_hi": spread.hi,
                "governing": governing,
                "clock": summary.clocks.get(governing, float("nan")),
            }
            for sigma, accuracy in mean_by_sigma(summary, "selected_test_acc").items():
                rows.append({**common, "sigma_w": sigma, "selected_test_acc": accuracy})
        columns = [
            "label",
            "optimizer",
            "sigma_w",
            "selected_test_acc",
            "spread",
            "spread_lo",
            "spread_hi",
            "governing",
            "clock",
        ]
        return pd.DataFrame(rows, columns=columns)

    def _caption(self) -> str:
        return f"Analysis of {sum(len(g.runs) for g in self.groups)} runs in {len(self.groups)} groups"

    def __repr__(self) -> str:
        return f"Analysis(groups={len(self.groups)}, verdicts={self.verdicts()})"


def analyse(
    runs: SweepResult | ImportedRuns | str | os.PathLike | Mapping | None = None,
    *,
    store: Store | str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
) -> Analysis:
    r"""Judge Spec B's claims C1-C7 on finished runs.

    The runs are grouped by setting; each group's spread is the range of its seed-mean test
    accuracies across :math:`\sigma_w`, and each claim's rule compares spreads and clocks.

    Parameters
    ----------
    runs : SweepResult, ImportedRuns, str, os.PathLike, Mapping or None
        A :class:`SweepResult`, runs trained elsewhere (:class:`ImportedRuns`, from
        :func:`import_runs`), or a spec (as for :func:`sweep`) whose runs are read from ``store``;
        runs not yet in the store are left out.  ``None`` (``implicitbias analyse`` without a
        spec): every finished run of the built-in models and data sets in ``store`` and every run
        trained elsewhere that it holds.
    store : Store, str, os.PathLike or None
        Where the runs are read from (see :func:`open_store`).
    out : str, os.PathLike or None
        Where the figures go; ``None``: a temporary folder.

    Returns
    -------
    Analysis
        The groups, the judged results and the analysis as Markdown.

    Raises
    ------
    ParameterError
        A spec that cannot be read.

    See Also
    --------
    sweep : trains the runs.

    Examples
    --------
    >>> import implicitbias as ib
    >>> analysis = ib.analyse(ib.sweep("tiny"))
    >>> sorted(analysis.verdicts())
    ['c1', 'c2', 'c3', 'c4', 'c5', 'c6', 'c7']
    """
    if not isinstance(runs, SweepResult | ImportedRuns) and runs is not None:
        _spec_argument("runs", runs)
    out = _folder("out", out)
    from implicitbias.claims import Context
    from implicitbias.claims.forgetting.analyse import judge_groups, judged
    from implicitbias.validation.analysis import group_runs

    with open_store(store) as opened:
        pairs, title = _finished_runs(runs, opened)
        groups = group_runs(pairs)
        results = tuple(judged(groups))
        markdown = judge_groups(Context(store=opened, out=out, progress=False), groups, title, results=results)
    return Analysis(tuple(groups), results, markdown, title)


def _finished_runs(
    runs: SweepResult | ImportedRuns | str | os.PathLike | Mapping | None, store: Store
) -> tuple[list[tuple[dict, Mapping[str, Any]]], str]:
    """The finished (config, record) pairs that :func:`analyse` judges, and the analysis's title."""
    from implicitbias.validation.run import KIND, execute, run_codes
    from implicitbias.validation.runs_format import imported_runs
    from implicitbias.validation.sweep import load_spec

    if isinstance(runs, SweepResult):
        return runs.runs, f"sweep {runs.spec.name}: {len(runs.records)} finished runs"
    if isinstance(runs, ImportedRuns):
        return list(runs.runs), f"runs of {runs.path.name}: {len(runs.runs)} finished runs"
    if runs is None:  # the built-in models' and data sets' runs, and every run trained elsewhere
        elsewhere = imported_runs(store)
        pairs = store.records(KIND, code=store.code_of(execute)) + elsewhere
        return pairs, f"all {len(pairs)} finished runs in {store.path}" + (
            f" ({len(elsewhere)} trained elsewhere)" if elsewhere else ""
        )
    spec = load_spec(runs)
    code = run_codes(store)
    found = [(c, store.get(KIND, c, code=code(c))) for c in spec.configs]
    pairs = [(c, r) for c, r in found if r is not None]
    return pairs, f"sweep {spec.name}: {len(pairs)} of {len(found)} runs finished"
