"""The Python API: the package's three jobs from a notebook or a script, without a store to set up.

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
naming the parameter and what is allowed.

Depth convention everywhere: L counts weight matrices; the features are one more factor,
N = L + 1, and the Schatten exponent of P(K, L) is p = 2 / (L + 1).
Sources: Garrod, Keating, Thrampoulidis (ICML 2026; Spec A), Das, Beneventano, Dey, McKinley,
Poggio (arXiv 2605.29152; Spec B).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from implicitbias.numerics.maxmargin.cells import Certificate, PhaseCell
from implicitbias.theory import params
from implicitbias.theory.clocks import forgetting_clocks  # the API's as it is: T_SGD, T_L2, T_adapt of a run

if TYPE_CHECKING:
    import pandas as pd
    from matplotlib.figure import Figure
    from numpy.typing import ArrayLike

    from implicitbias.claims import Claim, Result, Verdict
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
    """The store a call uses: the session store for ``None``, the SQLite file at a path (closed
    again when the call ends), or an open ``Store`` itself."""
    from implicitbias.session import session_store
    from implicitbias.store import Store

    if store is None:
        yield session_store()
    elif isinstance(store, Store):
        yield store
    else:
        with Store(store) as opened:
            yield opened


# -- the phase diagram of P(K, L) ----------------------------------------------------------------


@dataclass(frozen=True)
class PhaseDiagram:
    """The cells of P(K, L) over a grid of K and L, in (K, L) order, with the crossovers.

    ``crossovers``: per column, the real depths where two structures optimal somewhere in it tie
    (``numerics.maxmargin.phase``).  ``columns``: the column records as computed (nested dicts,
    for ``implicitbias.atlas``).
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
        return sorted({c.K for c in self.cells})

    @property
    def L(self) -> list[int | float]:
        return sorted({c.L for c in self.cells}, key=float)

    def cell(self, K: int, L: int | float) -> PhaseCell:
        """The cell (K, L); ``ParameterError`` if the diagram has none."""
        found = next((c for c in self.cells if c.K == K and float(c.L) == float(L)), None)
        if found is None:
            raise params.ParameterError(
                f"cell (K, L) must be one of the diagram's, K in {self.K} and L in {self.L}; got ({K}, {L})"
            )
        return found

    def boundary(self) -> dict[int, int | None]:
        """Per K: the smallest integer L at which NC is suboptimal (None where it never is)."""
        from implicitbias.numerics.maxmargin.phase import boundary

        return {row["K"]: row["L_star"] for row in boundary([c.record for c in self.cells])}

    def rows(self) -> list[dict]:
        """One flat dict per cell: the columns of ``to_csv`` (``implicitbias.atlas.cell_rows``)."""
        from implicitbias.atlas import cell_rows

        return cell_rows(self.cells)

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write ``rows()`` as CSV to ``path``; returns the path."""
        from implicitbias.figures import write_csv

        rows = self.rows()
        return write_csv(Path(path), {k: [r[k] for r in rows] for k in rows[0]})

    def to_frame(self) -> pd.DataFrame:
        """``rows()`` as a pandas DataFrame (needs pandas, not a dependency of the package)."""
        try:
            import pandas as pd
        except ImportError:
            raise ImportError("PhaseDiagram.to_frame needs pandas: pip install pandas (or use to_csv / rows)") from None
        return pd.DataFrame(self.rows())

    def plot(self, path: str | os.PathLike | None = None) -> Figure:
        """The verdict / rank / gap heatmap over (K, integer L) as a matplotlib figure; with
        ``path``, also saved there as PNG with a CSV of the plotted numbers beside it."""
        from implicitbias.atlas import heatmap_figure
        from implicitbias.figures import write_csv

        fig, columns = heatmap_figure(self.cells)
        if path is not None:
            png = Path(path).with_suffix(".png")
            png.parent.mkdir(parents=True, exist_ok=True)
            fig.savefig(png, dpi=130, bbox_inches="tight")
            write_csv(png.with_suffix(".csv"), columns)
        return fig

    def write_atlas(self, out: str | os.PathLike) -> dict[str, Path]:
        """Every output of ``implicitbias phase`` into folder ``out`` (``implicitbias.atlas``)."""
        from implicitbias.atlas import write_outputs

        return write_outputs(list(self.columns), Path(out))


def _values(name: str, values: int | float | Iterable, kind: Callable) -> list:
    items = [values] if isinstance(values, (int, float)) else list(values)
    if not items:
        raise params.ParameterError(f"{name} must hold at least one value, got none")
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
    """Where neural collapse stops being optimal: every cell (K, L) of P(K, L).

    P(K, L): minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p, p = 2 / (L + 1), subject to
    Zbar_kk - Zbar_ck >= 1 (Spec A, section 3).  ``K``: class counts (>= 2); ``L``: depths
    (reals >= 1; L counts weight matrices); ``effort``: search effort (starts grow with it).
    Computed per K (one column, all depths) in two cached passes, as ``implicitbias phase`` does;
    ``executor`` (e.g. ``implicitbias.executors.open_executor("process")``) runs columns in
    parallel.  A column's cross-seeding runs along its depths, so a cell's best matrix can
    improve when more depths are asked for, never worsen.
    """
    from implicitbias.numerics.maxmargin.phase import MAX_CELLS, column_config, typed_cells
    from implicitbias.numerics.maxmargin.phase import phase_diagram as compute

    Ks = sorted(set(_values("K", K, lambda n, v: params.integer(n, v, minimum=2))))
    Ls = sorted(set(_values("L", L, lambda n, v: params.real(n, v, minimum=1, maximum=10_000))))
    if len(Ks) * len(Ls) > MAX_CELLS:
        raise params.ParameterError(f"grid must have at most {MAX_CELLS} cells, got {len(Ks) * len(Ls)}")
    configs = [column_config(k, Ls, effort, seed) for k in Ks]
    with open_store(store) as opened:
        columns = compute(functools.partial(opened.map, executor=executor, progress=progress), configs)
    cells = tuple(typed_cells(columns))
    crossovers = tuple(x for col in columns for x in col["crossovers"])
    return PhaseDiagram(cells, crossovers, tuple(columns))


@dataclass(frozen=True)
class MarginProblem:
    """The deep-UFM max-margin problem P(K, L) of one cell (Spec A, section 1).

    minimise S_p(Zbar) = sum_i sigma_i(Zbar)^p, p = 2 / (L + 1), over K x K Zbar with
    Zbar_kk - Zbar_ck >= 1 (c != k).  L counts weight matrices (N = L + 1 factors).
    """

    K: int
    L: int | float

    def __post_init__(self) -> None:
        params.integer("K", self.K, minimum=2)
        params.real("L", self.L, minimum=1, maximum=10_000)

    @property
    def p(self) -> float:
        """The Schatten exponent 2 / (L + 1)."""
        from implicitbias.numerics.maxmargin.margin import schatten_exponent

        return schatten_exponent(self.L)

    @property
    def nc_value(self) -> float:
        """S_p of the simplex ETF at unit margin: K - 1 at every depth."""
        return float(self.K - 1)

    def objective(self, Z: ArrayLike) -> float:
        """S_p of ``Z`` rescaled to unit margin (any separating K x K matrix)."""
        from implicitbias.numerics.maxmargin.solver import verify

        Z = np.asarray(Z, dtype=float)
        if Z.shape != (self.K, self.K):
            raise params.ParameterError(f"Z must be a {self.K} x {self.K} matrix, got shape {Z.shape}")
        return verify(Z, self.p).objective

    def solve(self, *, effort: int = 1, seed: int = 0, store: Store | str | os.PathLike | None = None) -> PhaseCell:
        """The global search, verdict and certificate of this cell (``phase_diagram`` of one cell)."""
        return phase_diagram(self.K, self.L, effort=effort, seed=seed, store=store).cells[0]


# -- derivations and metrics: the science layers' own objects -----------------------------------


def modified_flow(
    optimizer: str, order: int = 1, *, dim: int = 1, l2: bool = False, minibatches: int = 1
) -> ModifiedFlow:
    """The modified flow of ``optimizer`` to ``order`` in the step size h, derived with sympy.

    d theta/dt = f_0 + h f_1 + ... + h^order f_order, by Taylor matching of one step of the
    update (backward error analysis).  ``optimizer``: a name of ``theory.updates.UPDATES``
    (``gd``, ``heavy_ball``, ``nesterov``, ``rmsprop``, ``adam``, ``adamw``, ``sign``, ``muon``)
    or ``sgd``; ``l2`` adds coupled weight decay; ``minibatches`` > 1 is SGD with random
    reshuffling.  ``.latex()`` prints it.
    """
    from implicitbias.theory.modified_flow import modified_flow as derive
    from implicitbias.theory.updates import builtin

    return derive(builtin(optimizer, l2=l2, minibatches=minibatches), order=order, dim=dim)


def singular_value_ode(K: int, L: int, *, n: int = 1, balanced: bool = True) -> SpectralODE:
    """The singular-value ODE of the deep UFM under Hadamard initialisation (Spec A, section 4).

    K a power of two, L weight matrices (N = L + 1 factors), n samples per class; balanced:
    dS_j/dt = N/(K sqrt n) S_j^(2 - 2/N) (1 - g_j).  Integrate it with
    ``implicitbias.numerics.ufm.spectral_flow.integrate(ode, initial, t_end)``.
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
    """NC1-NC4 of ``features`` (n_samples x d) with integer ``labels`` 0..K-1 (Papyan et al. 2020).

    ``classifier``: the K x d last-layer weights W (``bias`` its K biases).  Without it, W is the
    matrix of centred class means, so NC3 (self-duality) is 0 by construction and NC4 compares
    the nearest-class-mean rule with itself; pass the trained classifier to measure them.
    """
    from implicitbias.numerics.metrics.nc_metrics import class_mean_rows
    from implicitbias.numerics.metrics.nc_metrics import nc_metrics as metrics

    H = np.asarray(features, dtype=float)
    y = np.asarray(labels)
    if classifier is None:
        if H.ndim != 2 or y.ndim != 1 or len(y) != len(H) or not np.issubdtype(y.dtype, np.integer) or y.min() < 0:
            raise params.ParameterError("features must be n_samples x d and labels one integer >= 0 per row")
        means = class_mean_rows(H, y, int(y.max()) + 1)
        classifier = means - means.mean(axis=0)
    return metrics(H, y, classifier, bias, convention=convention)


# -- claims --------------------------------------------------------------------------------------


def claims() -> dict[str, Claim]:
    """Every claim of the two specs by its slug (``theorem-3.1``, ``c1``, ...), in report order."""
    from implicitbias.claims import by_slug

    return by_slug()


_SEVERITY = ("disagrees", "inconclusive", "not run", "agrees")


@dataclass(frozen=True)
class Check:
    """A claim judged: one ``Result`` per data set it is judged on (usually one).

    ``verdict`` is the most severe of its verdicts (disagrees, inconclusive, not run, agrees);
    ``agrees`` is true when every data set agrees, so ``assert ib.check(slug).agrees`` is a test.
    """

    slug: str
    claim: Claim = field(repr=False)
    results: tuple[Result, ...] = field(repr=False)

    @property
    def verdicts(self) -> tuple[Verdict, ...]:
        return tuple(r.verdict for r in self.results)

    @property
    def verdict(self) -> str:
        return min((v.verdict for v in self.verdicts), key=_SEVERITY.index)

    @property
    def agrees(self) -> bool:
        return all(v.verdict == "agrees" for v in self.verdicts)

    @property
    def reason(self) -> str:
        return "; ".join(
            f"{r.evidence.label}: {r.verdict.reason}" if r.evidence.label else r.verdict.reason for r in self.results
        )

    @property
    def measured(self) -> str:
        return "; ".join(r.verdict.measured for r in self.results)

    def __str__(self) -> str:
        return f"{self.slug}: {self.verdict} ({self.measured}): {self.reason}"


def check(
    slug: str,
    *,
    tier: str = "default",
    store: Store | str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
    executor: Executor | None = None,
    progress: bool = False,
) -> Check:
    """Measure and judge the claim ``slug`` (see ``claims()``) on ``tier``; figures go to ``out``
    (a temporary folder when None)."""
    from implicitbias.claims import Context, evaluate

    known = claims()
    params.choice("claim", slug, list(known))
    with open_store(store) as opened:
        ctx = Context(
            store=opened, out=None if out is None else Path(out), tier=tier, executor=executor, progress=progress
        )
        results = evaluate(known[slug], ctx)
    return Check(slug, known[slug], tuple(results))


# -- Spec B: sweeps and their analysis ----------------------------------------------------------


@dataclass(frozen=True)
class SweepResult:
    """A finished sweep: its expanded spec and one run record per run, in spec order."""

    spec: Any  # implicitbias.validation.sweep.Spec
    records: tuple[Mapping[str, Any], ...] = field(repr=False)

    @property
    def runs(self) -> list[tuple[dict, Mapping[str, Any]]]:
        """(config, record) pairs, as ``analyse`` reads them."""
        return list(zip(self.spec.configs, self.records, strict=True))

    @property
    def diverged(self) -> int:
        return sum(r["status"] == "diverged" for r in self.records)


def sweep(
    spec: str | os.PathLike | Mapping,
    *,
    store: Store | str | os.PathLike | None = None,
    executor: Executor | None = None,
    progress: bool = False,
) -> SweepResult:
    """Run every missing run of ``spec`` (a TOML path, a packaged spec name such as ``tiny``, or
    the parsed table) and return all its records; what is in ``store`` is not rerun
    (``implicitbias sweep``).  Its ``arch`` and ``dataset`` may name a model factory and a data
    loader of your own, ``"package.module:function"`` (``implicitbias.validation.external``)."""
    from implicitbias.validation.sweep import check_data, load_spec, run_sweep

    loaded = check_data(load_spec(spec))
    with open_store(store) as opened:
        records = run_sweep(loaded, opened, executor=executor, progress=progress)
    return SweepResult(loaded, tuple(records))


@dataclass(frozen=True)
class ImportedRuns:
    """Runs trained elsewhere, read from a file in the run format and put in a store
    (``implicitbias import``; the format: ``implicitbias.validation.runs_format``).

    ``runs``: (config, record) pairs, as ``analyse`` reads them; ``clocks``: how their clocks were
    obtained (recorded per step, or reconstructed from a schedule), in one sentence."""

    path: Path
    runs: tuple[tuple[dict, Mapping[str, Any]], ...] = field(repr=False)

    def __len__(self) -> int:
        return len(self.runs)

    @property
    def diverged(self) -> int:
        return sum(r["status"] == "diverged" for _, r in self.runs)

    @property
    def clocks(self) -> str:
        from implicitbias.validation.runs_format import clocks_line

        return clocks_line(self.runs)


def import_runs(path: str | os.PathLike, *, store: Store | str | os.PathLike | None = None) -> ImportedRuns:
    """Read the runs of a CSV, Parquet or JSON-lines file in the run format (one row per run and
    epoch; ``implicitbias.validation.runs_format``), check every value (``ParameterError`` naming
    the file, row and column) and put them in ``store``, where ``analyse`` and ``implicitbias
    analyse`` judge C1-C7 on them beside the package's own runs."""
    from implicitbias.validation.runs_format import import_runs as put_runs

    if not isinstance(path, str | os.PathLike):
        raise params.ParameterError(f"path must be the path of a CSV, Parquet or JSON-lines file, got {path!r}")
    with open_store(store) as opened:
        pairs = put_runs(path, opened)
    return ImportedRuns(Path(path), tuple(pairs))


@dataclass(frozen=True)
class Analysis:
    """Spec B's claims C1-C7 judged on a sweep's runs (``implicitbias analyse``).

    ``groups``: the runs grouped by setting (everything but sigma_w and seed); ``results``: one
    judged ``Result`` per claim and data set; ``markdown``: the analysis as the CLI writes it.
    """

    groups: tuple[Group, ...] = field(repr=False)
    results: tuple[Result, ...] = field(repr=False)
    markdown: str = field(repr=False)

    def verdicts(self) -> dict[str, str]:
        """Claim slug -> verdict."""
        return {r.claim.slug: r.verdict.verdict for r in self.results}


def analyse(
    runs: SweepResult | ImportedRuns | str | os.PathLike | Mapping,
    *,
    store: Store | str | os.PathLike | None = None,
    out: str | os.PathLike | None = None,
) -> Analysis:
    """Judge C1-C7 on finished runs: a ``SweepResult``, runs trained elsewhere (``ImportedRuns``), or
    a spec whose runs are read from ``store`` (runs not yet in the store are left out).  Figures go
    to ``out`` (default: a temporary folder)."""
    from implicitbias.claims import Context
    from implicitbias.claims.forgetting.analyse import judge_groups, judged
    from implicitbias.validation.analysis import group_runs
    from implicitbias.validation.run import KIND, run_codes
    from implicitbias.validation.sweep import load_spec

    with open_store(store) as opened:
        if isinstance(runs, SweepResult):
            pairs, name = runs.runs, f"sweep {runs.spec.name}"
        elif isinstance(runs, ImportedRuns):
            pairs, name = list(runs.runs), f"runs of {runs.path.name}"
        else:
            spec = load_spec(runs)
            code = run_codes(opened)
            found = [(c, opened.get(KIND, c, code=code(c))) for c in spec.configs]
            pairs, name = [(c, r) for c, r in found if r is not None], f"sweep {spec.name}"
        ctx = Context(store=opened, out=None if out is None else Path(out), progress=False)
        groups = group_runs(pairs)
        results = tuple(judged(groups))
        markdown = judge_groups(ctx, groups, f"{name}: {len(pairs)} finished runs", results=results)
    return Analysis(tuple(groups), results, markdown)
