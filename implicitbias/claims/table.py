"""The claims table, its one writer: one ``Row`` per verdict (a claim judged on one data set, or a
claim whose computation raised), written as Markdown (:func:`markdown`: the report's, ``implicitbias
verify``'s and ``implicitbias analyse``'s table, which the report's HTML page renders), as CSV
(:func:`write_csv`: the report's ``claims.csv``) and as JSON (:func:`json_records`: ``verify --json``,
``report --json``).

Columns of the CSV and JSON records: claim id, its slug (``ib.check``, ``verify --only``), its paper (spec A or B), the
statement, what was measured, the verdict and the reason for it, the verdict's numbers (a JSON
object: the theorem checks' gaps, tolerances and counts), the deciding quantity with its estimate, interval and measured
coverage, n seeds, a permutation p-value, and for Spec B's memory claims the simulated rates
P(agrees | claim false), P(disagrees | claim true), P(inconclusive | claim true), the seeds an
underpowered verdict needs, the checkpoint judged, the (verdict) seeds and the verdicts on two
disjoint halves of them (stability).  A claim without such
estimate (the theorem checks) leaves those columns empty.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from implicitbias.figures import markdown_table
from implicitbias.plain import plain

__all__ = ["COLUMNS", "ClaimRecord", "Row", "rows", "records", "write_csv", "json_records", "markdown", "numbers_markdown"]


@dataclass(frozen=True)
class Row:
    """One row of the claims table: a claim judged on one data set (``Row.of``) or a claim whose
    computation raised (``Row.failed``)."""

    claim: str
    statement: str
    check: str
    measured: str
    verdict: str
    reason: str = ""
    estimate: Any = None  # claims.forgetting.memory_rules.Estimate: the numbers of its claims.csv row (None: none)
    slug: str = ""  # the claim's slug (``ib.check``, ``verify --only``)
    paper: str = ""  # its spec, A or B
    numbers: Mapping[str, Any] = field(default_factory=dict)  # the verdict's numbers

    @classmethod
    def of(cls, result) -> Row:
        """The row of a judged claim (a ``claims.Result``)."""
        numbers = result.verdict.numbers
        return cls(*result.row(), estimate=numbers.get("estimate"), slug=result.claim.slug, paper=result.claim.paper,
                   numbers=numbers)

    @classmethod
    def failed(cls, claim, error: str) -> Row:
        """The row of a claim whose computation raised ``error``."""
        return cls(claim.id, claim.statement, "-", "-", "error", error, slug=claim.slug, paper=claim.paper)


def rows(judgements: Iterable) -> list[Row]:
    """The rows of ``claims.Judgement`` s: one per result, one ``error`` row per claim that raised."""
    return [row for j in judgements
            for row in ([Row.failed(j.claim, j.error)] if j.error is not None else [Row.of(r) for r in j.results])]


@dataclass(frozen=True)
class ClaimRecord:
    """One row of ``claims.csv`` (module docstring); None where a claim has no such number."""

    claim: str
    slug: str | None = None
    paper: str | None = None
    statement: str | None = None
    measured: str | None = None
    verdict: str = ""
    reason: str | None = None
    numbers: str | None = None
    quantity: str | None = None
    estimate: float | None = None
    lo: float | None = None
    hi: float | None = None
    coverage: float | None = None
    n_seeds: int | None = None
    p: float | None = None
    p_agrees_if_false: float | None = None
    p_disagrees_if_true: float | None = None
    p_inconclusive_if_true: float | None = None
    seeds_needed: int | str | None = None
    checkpoint: str | None = None
    seeds: str | None = None
    stability: str | None = None


COLUMNS = tuple(ClaimRecord.__dataclass_fields__)


def _number(x):
    """None for a missing number (None or NaN); floats to 6 significant digits."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return None
    return float(f"{x:.6g}") if isinstance(x, float) else x


def records(rows: Sequence) -> list[ClaimRecord]:
    """The records of report rows (objects with ``claim``, ``verdict`` and ``estimate``: a
    ``claims.forgetting.memory_rules.Estimate`` or None; and, where they have them, ``slug``,
    ``paper``, ``statement``, ``measured``, ``reason`` and the verdict's ``numbers``)."""
    out = []
    for r in rows:
        numbers = {k: v for k, v in (getattr(r, "numbers", None) or {}).items() if k != "estimate"}
        text = {name: getattr(r, name, None) or None for name in ("slug", "paper", "statement", "measured", "reason")}
        own = ClaimRecord(r.claim, verdict=r.verdict, numbers=json.dumps(plain(numbers)) if numbers else None, **text)
        e = getattr(r, "estimate", None)
        if e is not None:
            own = replace(own, quantity=e.quantity, estimate=_number(e.estimate), lo=_number(e.lo), hi=_number(e.hi),
                          coverage=_number(e.coverage), n_seeds=e.n or None, p=_number(e.p),
                          p_agrees_if_false=_number(e.agree_false), p_disagrees_if_true=_number(e.disagree_true),
                          p_inconclusive_if_true=_number(e.inconclusive), seeds_needed=e.seeds_needed,
                          checkpoint=e.checkpoint or None, seeds=e.seeds or None, stability=e.stability or None)
        out.append(own)
    return out


def write_csv(rows: Sequence, path: str | Path) -> Path:
    """``claims.csv`` of report rows at ``path``."""
    path = Path(path)
    with path.open("w", newline="") as fh:
        writer = csv.DictWriter(fh, COLUMNS)
        writer.writeheader()
        for rec in json_records(rows):
            writer.writerow({k: "" if v is None else v for k, v in rec.items()})
    return path


def json_records(rows: Sequence) -> list[dict]:
    """The records of ``rows`` as JSON-able objects, one per row, the columns of ``claims.csv``."""
    return [asdict(r) for r in records(rows)]


def markdown(rows: Sequence[Row]) -> str:
    """The claims table in Markdown: one line per row (claim, statement, check run, measured, verdict,
    why), then the numbers of ``claims.csv`` for the rows that have them (:func:`numbers_markdown`)."""
    verdicts = markdown_table(["claim", "statement", "check run", "measured", "verdict", "why"],
                              [[r.claim, r.statement, r.check, r.measured, r.verdict, r.reason] for r in rows])
    numbers = numbers_markdown(rows)
    return verdicts + ("\n\n" + numbers if numbers else "")


def numbers_markdown(rows: Sequence) -> str:
    """The numbers of ``claims.csv`` as a Markdown table (rows with numbers only; empty if none)."""

    def fmt(x, digits=3):
        return "-" if x is None else (f"{x:.{digits}g}" if isinstance(x, float) else str(x))

    recs = [r for r in records(rows) if r.quantity is not None]
    if not recs:
        return ""
    return markdown_table(
        ["claim", "verdict", "quantity", "estimate [95% interval]", "coverage", "n seeds", "p",
         "P(agrees if false)", "P(disagrees if true)", "P(inconclusive if true)", "seeds needed", "checkpoint",
         "seeds", "stability"],
        [[r.claim, r.verdict, r.quantity, f"{fmt(r.estimate)} [{fmt(r.lo)}, {fmt(r.hi)}]", fmt(r.coverage),
          fmt(r.n_seeds), fmt(r.p), fmt(r.p_agrees_if_false), fmt(r.p_disagrees_if_true),
          fmt(r.p_inconclusive_if_true), fmt(r.seeds_needed), fmt(r.checkpoint), fmt(r.seeds), fmt(r.stability)]
         for r in recs])
