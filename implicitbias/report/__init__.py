"""The report: one Markdown file (plus PNG figures and their CSVs) covering every claim.

Sections are modules of ``implicitbias.report.sections``; each defines

    NAME: str         short id, used by ``implicitbias report --only NAME``
    ORDER: int        position in the report
    TITLE: str        heading
    VERIFY: bool      optional; True for theorem checks that ``implicitbias verify`` runs
    build(ctx: Context) -> Section

A section reads what it needs from the store (computing and storing what is missing, through
``ctx.store`` and ``ctx.executor``), writes its figures under ``ctx.out`` and returns Markdown
and the claims it checked.  The writer puts every section's claims into one table at the top.
"""

from __future__ import annotations

import base64
import html
import importlib
import pkgutil
import re
import platform
import time
from concurrent.futures import Executor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

from implicitbias import __version__
from implicitbias.figures import markdown_table
from implicitbias.store import Store
from implicitbias.theory import params

__all__ = ["Claim", "Section", "Context", "Report", "verdict", "TIERS", "available_sections", "build_report", "write_html"]

TIERS = ("default", "gpu", "full")
VERDICTS = ("agrees", "disagrees", "inconclusive", "not run")


@dataclass
class Claim:
    """One row of the claims table: what the source says, what was run, what it gave."""

    claim: str  # e.g. "Theorem 3.1" or "C1"
    statement: str  # the claim in a few words
    check: str  # the check that was run (data, scale, method)
    measured: str  # the number(s) it produced
    verdict: str  # one of VERDICTS

    def __post_init__(self):
        params.choice("verdict", self.verdict, VERDICTS)


def verdict(holds: bool) -> str:
    """The verdict of a check that either confirms the claim or refutes it."""
    return "agrees" if holds else "disagrees"


@dataclass
class Section:
    title: str
    markdown: str
    claims: list[Claim] = field(default_factory=list)


@dataclass
class Report:
    """What ``build_report`` wrote: the Markdown file (an HTML twin sits beside it) and all claims."""

    path: Path
    claims: list[Claim]


@dataclass
class Context:
    out: Path
    store: Store
    tier: str = "default"
    executor: Executor | None = None
    progress: bool = True

    def path(self, name: str) -> Path:
        """Path for a figure or table file of the report (inside ``out/figures``)."""
        p = self.out / "figures" / name
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    def link(self, path: Path) -> str:
        """Relative link from the report file to ``path``."""
        return path.relative_to(self.out).as_posix()


def available_sections() -> dict[str, ModuleType]:
    """The section modules by NAME, in report order."""
    pkg = importlib.import_module("implicitbias.report.sections")
    mods = [importlib.import_module(f"{pkg.__name__}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__)]
    return {m.NAME: m for m in sorted(mods, key=lambda m: m.ORDER)}


def build_report(
    out: str | Path,
    store: Store,
    *,
    tier: str = "default",
    only: list[str] | None = None,
    executor: Executor | None = None,
    progress: bool = True,
) -> Report:
    """Build the report into folder ``out`` (``report.md``, ``report.html``, ``figures/``)."""
    params.choice("tier", tier, TIERS)
    available = available_sections()
    for name in only or []:
        params.choice("only", name, available)
    chosen = [m for n, m in available.items() if only is None or n in only]
    ctx = Context(out=Path(out), store=store, tier=tier, executor=executor, progress=progress)
    ctx.out.mkdir(parents=True, exist_ok=True)

    built: list[tuple[Section, float]] = []
    for mod in chosen:
        if progress:
            print(f"[report] {mod.TITLE} ...", flush=True)
        t0 = time.perf_counter()
        built.append((mod.build(ctx), time.perf_counter() - t0))

    claims = [c for s, _ in built for c in s.claims]
    lines = [
        "# implicitbias report",
        "",
        f"implicitbias {__version__}, tier `{tier}`, built {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        f"on {platform.node() or 'unknown host'} ({platform.machine()}, Python {platform.python_version()}); "
        f"store `{store.path}`.",
        "",
        "Depth convention: L counts weight matrices; the features are one more factor, N = L + 1.",
        "",
        "## Claims",
        "",
        markdown_table(
            ["claim", "statement", "check run", "measured", "verdict"],
            [[c.claim, c.statement, c.check, c.measured, c.verdict] for c in claims],
        )
        if claims
        else "(no section produced claims)",
        "",
        markdown_table(["section", "seconds"], [[s.title, f"{dt:.1f}"] for s, dt in built]),
        "",
    ]
    for section, _ in built:
        lines += [f"## {section.title}", "", section.markdown.strip(), ""]
    report = ctx.out / "report.md"
    report.write_text("\n".join(lines))
    write_html(report)
    return Report(report, claims)


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1b1b1b; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f2f2f2; }
img { max-width: 100%; }
code, pre { background: #f6f6f6; }
pre { padding: 0.5rem; overflow-x: auto; }
"""


def write_html(report: Path) -> Path:
    """A self-contained HTML page of ``report`` (Markdown): figures are embedded as data URIs."""
    import markdown

    body = markdown.markdown(report.read_text(), extensions=["tables", "fenced_code"])

    def embed(match: re.Match) -> str:
        src = html.unescape(match.group(1))
        path = report.parent / src
        if not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode()
        return f'src="data:image/png;base64,{data}"'

    body = re.sub(r'src="([^"]+\.png)"', embed, body)
    page = (
        "<!DOCTYPE html>\n<html><head><meta charset='utf-8'><title>implicitbias report</title>"
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )
    out = report.with_suffix(".html")
    out.write_text(page)
    return out
