"""The claims layer: every claim of the two specs as a first-class, falsifiable object.

A claim is the unit users read.  Its module (one per claim, in the subpackage of its paper:
``depth`` for Spec A, ``forgetting`` for Spec B) is the one place that says what is checked, on
which cells, against which named threshold and why.  The report,
``implicitbias verify`` and the tests all read the same claim objects.

A claim module defines ``CLAIM``, an instance of a ``Claim`` subclass that holds

- ``id``, ``statement``, ``source``: what the spec says and where it comes from;
- ``section`` and ``order``: where the report shows it (sections are layout only);
- ``configs``: a typed, frozen config per tier (``default``, ``gpu``, ``full``);
- ``thresholds``: every number a verdict compares against, as a named ``Threshold`` with a
  one-line justification (no literals inside rules);
- ``measure(ctx, config)``: runs its cells, pure functions of a config, through
  ``ctx.map`` (that is ``Store.map``: cached, resumable, fingerprinted) and returns one
  ``Evidence`` per data set it is judged on (the same rule judges every tier and data set);
- ``judge(evidence)``: a pure function of the evidence's numbers returning a ``Verdict``:
  agrees / disagrees / inconclusive / not run, with the reason and the numbers.  It is tested on
  synthetic evidence for every outcome in ``outcomes`` (a rule that cannot disagree is a bug);
- ``render(ctx, evidence, verdict)``: its figure and detail tables, as Markdown.

An exhibit module (no ``CLAIM``; ``phase_atlas``, ``modified_flows``, ``group_overviews``)
computes what a report section shows beside its claims (the atlas of P(K, L) and the GD
census, the derived flows, the groups of a tier), through ``ctx.map`` like a claim, and returns
a typed result; the section only lays it out.

Layers: this package sits above the store and executors and below the report and the CLI; it
calls validation, numerics and theory.  Depth L counts weight matrices (N = L + 1 factors).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
import sys
import types
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import Executor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from implicitbias.theory import params

__all__ = [
    "VERDICTS",
    "TIERS",
    "Threshold",
    "Verdict",
    "Evidence",
    "Result",
    "Context",
    "Claim",
    "agrees",
    "disagrees",
    "inconclusive",
    "not_run",
    "decide",
    "typed",
    "registry",
    "evaluate",
    "slug",
    "by_slug",
]

VERDICTS = ("agrees", "disagrees", "inconclusive", "not run")
TIERS = ("default", "gpu", "full")


PAPERS = {"depth": "A", "forgetting": "B"}  # claims subpackage -> its spec: Spec A (depth), Spec B (forgetting)


@dataclass(frozen=True)
class Threshold:
    """A number a verdict compares against, with the one-line reason it has this value."""

    value: float
    why: str

    def __float__(self) -> float:
        return float(self.value)


@dataclass(frozen=True)
class Verdict:
    """What a rule decided: the verdict, why, the numbers as a reader sees them, and as data."""

    verdict: str
    reason: str
    measured: str
    numbers: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        params.choice("verdict", self.verdict, VERDICTS)


def agrees(reason: str, measured: str, **numbers) -> Verdict:
    return Verdict("agrees", reason, measured, numbers)


def disagrees(reason: str, measured: str, **numbers) -> Verdict:
    return Verdict("disagrees", reason, measured, numbers)


def inconclusive(reason: str, measured: str, **numbers) -> Verdict:
    return Verdict("inconclusive", reason, measured, numbers)


def not_run(reason: str, measured: str = "-", **numbers) -> Verdict:
    return Verdict("not run", reason, measured, numbers)


def decide(holds: bool, measured: str, *, why_agrees: str, why_disagrees: str, **numbers) -> Verdict:
    """The verdict of a check that either confirms the claim or refutes it."""
    if holds:
        return agrees(why_agrees, measured, **numbers)
    return disagrees(why_disagrees, measured, **numbers)


@dataclass
class Evidence:
    """What a claim measured on one data set: the check run (text) and the numbers, ``data``: a frozen
    dataclass of the claim's family read by attribute (``Measured`` in the claim's module), or a
    dict where a claim has none yet.

    ``label`` names the data set when a claim is judged on several (e.g. the toy MLP and a
    ResNet tier); it is empty otherwise.  ``missing`` says why nothing could be measured (the
    data files are not on this machine, and how to get them): such evidence is ``not run``.
    """

    check: str
    data: Any = field(repr=False)  # every number measured: too long to print
    label: str = ""
    missing: str | None = None


def typed(kind: type, records: Iterable[Mapping]) -> tuple:
    """Store records (dicts whose keys are ``kind``'s fields) as a tuple of ``kind``: how a claim reads
    its cells into its typed evidence."""
    return tuple(kind(**record) for record in records)


@dataclass
class Context:
    """Where a claim runs: the store, the executor, the tier, and the folder for its figures.

    ``store=None`` is the session's temporary store (``implicitbias.session``): results are
    cached for the life of the process and nothing is written outside a temporary folder.
    """

    store: Any = None  # implicitbias.store.Store
    out: Path | None = None
    tier: str = "default"
    executor: Executor | None = None
    progress: bool = True
    # Spec B's groups of runs built in this context, by their runs' configs (canonical JSON): one Group
    # per set of runs, whichever claim measures it (``forgetting.training.measure_groups``)
    groups: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        params.choice("tier", self.tier, TIERS)
        if self.store is None:
            from implicitbias.session import session_store

            self.store = session_store()

    def map(self, kind: str, fn: Callable[[dict], Mapping], configs: Iterable[Mapping], *,
            parallel: bool = True, desc: str | None = None) -> list[dict]:
        """``Store.map`` on this context's store (and executor, unless ``parallel`` is false)."""
        return self.store.map(kind, fn, configs, executor=self.executor if parallel else None,
                              progress=self.progress, desc=desc or kind)

    def path(self, name: str) -> Path:
        """Path of a figure or table file (``out/figures/name``; a temporary folder without ``out``).
        Characters a link must escape (spaces, quotes, brackets...) become ``_`` in the file name, so
        every Markdown renderer (CommonMark included) finds the file the report links."""
        if self.out is None:
            import tempfile

            self.out = Path(tempfile.mkdtemp(prefix="implicitbias-"))
        p = self.out / "figures" / re.sub(r"[^A-Za-z0-9_./+=-]", "_", name)
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def link(self, path: Path) -> str:
        """Relative link from the report file to ``path``."""
        return path.relative_to(self.out).as_posix()


class Claim:
    """Base class of the claims; see the package docstring for what a subclass defines."""

    id: ClassVar[str]
    statement: ClassVar[str]
    source: ClassVar[str]
    section: ClassVar[str]
    order: ClassVar[int] = 0
    verify: ClassVar[bool] = False  # part of ``implicitbias verify`` (theorem checks, minutes on a CPU)
    outcomes: ClassVar[tuple[str, ...]] = ("agrees", "disagrees")  # what ``judge`` can return (tested)
    thresholds: ClassVar[Mapping[str, Threshold]] = {}
    configs: ClassVar[Mapping[str, Any]] = {}

    @property
    def slug(self) -> str:
        """The claim's short id, for the API and the CLI (``slug(self.id)``)."""
        return slug(self.id)

    @property
    def paper(self) -> str:
        """The spec the claim comes from, by the subpackage of its module: ``A`` (``depth``),
        ``B`` (``forgetting``), else the subpackage's name."""
        package = type(self).__module__.removeprefix(f"{__name__}.").split(".")[0]
        return PAPERS.get(package, package)

    def config(self, tier: str):
        """The typed config of ``tier`` (tiers without their own use the ``default`` one)."""
        params.choice("tier", tier, TIERS)
        return self.configs.get(tier, self.configs.get("default"))

    def threshold(self, name: str) -> float:
        return float(self.thresholds[name])

    def measure(self, ctx: Context, config) -> Evidence | Sequence[Evidence]:
        raise NotImplementedError

    def judge(self, evidence: Evidence) -> Verdict:
        raise NotImplementedError

    def render(self, ctx: Context, evidence: Evidence, verdict: Verdict) -> str:
        return ""

    def fields(self) -> dict[str, str]:
        """What a reader sees of the claim: slug, id, statement, source, section, whether ``verify``
        runs it, the verdicts its rule can give and its named thresholds."""
        return {
            "slug": self.slug,
            "id": self.id,
            "statement": self.statement,
            "source": self.source,
            "section": self.section,
            "verify": "yes" if self.verify else "no",
            "outcomes": ", ".join(self.outcomes),
            "thresholds": "; ".join(f"{n} = {t.value:g} ({t.why})" for n, t in self.thresholds.items()) or "-",
        }

    def __repr__(self) -> str:
        return f"<Claim {self.slug}: {self.statement[:72]}{'...' if len(self.statement) > 72 else ''}>"

    def _repr_html_(self) -> str:
        from implicitbias.theory.display import field_frame, html_table

        return html_table(field_frame(self.fields()), f"Claim {self.id}")


@dataclass
class Result:
    """One row of the claims table: a claim judged on one piece of evidence, with its details."""

    claim: Claim
    evidence: Evidence
    verdict: Verdict
    markdown: str = ""

    @property
    def name(self) -> str:
        return f"{self.claim.id} ({self.evidence.label})" if self.evidence.label else self.claim.id

    def __repr__(self) -> str:
        return f"Result({self.name!r}, verdict={self.verdict.verdict!r}, measured={self.verdict.measured!r})"

    def row(self) -> list[str]:
        """claim, statement, check run, measured, verdict, reason."""
        v = self.verdict
        return [self.name, self.claim.statement, self.evidence.check, v.measured, v.verdict, v.reason]


def evaluate(claim: Claim, ctx: Context) -> list[Result]:
    """Measure ``claim`` in ``ctx`` and judge every piece of evidence it returns.

    Evidence whose data are not on this machine (``Evidence.missing``, or a ``DataUnavailable``
    raised while measuring) is ``not run`` with the reason and how to get the data."""
    from implicitbias.validation.data import DataUnavailable

    try:
        measured = claim.measure(ctx, claim.config(ctx.tier))
    except DataUnavailable as exc:
        measured = Evidence("needs data files", {}, missing=str(exc))
    evidence = [measured] if isinstance(measured, Evidence) else list(measured)
    results = []
    for ev in evidence:
        if ev.missing is not None:
            results.append(Result(claim, ev, not_run(ev.missing)))
            continue
        verdict = claim.judge(ev)
        results.append(Result(claim, ev, verdict, claim.render(ctx, ev, verdict)))
    return results


def _raise(name: str):
    raise  # a claims package that cannot be imported is an error, never a claim left out


def registry() -> dict[str, Claim]:
    """Every claim, by id, in (section, order) order: the ``CLAIM`` of each module of this package
    and of its subpackages (``depth``, ``forgetting``)."""
    claims = []
    for info in pkgutil.walk_packages(__path__, f"{__name__}.", onerror=_raise):
        module = importlib.import_module(info.name)
        claim = getattr(module, "CLAIM", None)
        if isinstance(claim, Claim):
            claims.append(claim)
    ids = [c.id for c in claims]
    duplicated = sorted({i for i in ids if ids.count(i) > 1})
    if duplicated:
        raise RuntimeError(f"claim ids defined twice: {duplicated}")
    return {c.id: c for c in sorted(claims, key=lambda c: (c.section, c.order, c.id))}


def slug(claim_id: str) -> str:
    """The short id of a claim id: lower case, words joined by ``-``, dots kept between digits.

    ``"Theorem 3.1"`` -> ``theorem-3.1``, ``"C1"`` -> ``c1``, ``"Hadamard diagonalisation (s. 4)"``
    -> ``hadamard-diagonalisation-s-4``, ``"L = 1"`` -> ``l-1``.
    """
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", str(claim_id).lower())
    return re.sub(r"[^a-z0-9.]+", "-", text).strip("-")


def by_slug() -> dict[str, Claim]:
    """Every claim by its slug, in registry order (the slugs are checked to be distinct)."""
    claims = list(registry().values())
    slugs = [c.slug for c in claims]
    if len(set(slugs)) != len(slugs):
        raise RuntimeError(f"two claims share a slug: {sorted({s for s in slugs if slugs.count(s) > 1})}")
    return dict(zip(slugs, claims))


class _Claims(types.ModuleType):
    """This package, callable: ``implicitbias.claims()`` is ``by_slug()``.  (``import implicitbias
    as ib; ib.claims()`` is the API's list of claims, and the subpackage of that name is what
    ``ib.claims`` is once it has been imported, so the two are made one object.)"""

    def __call__(self) -> dict[str, Claim]:
        return by_slug()


sys.modules[__name__].__class__ = _Claims
