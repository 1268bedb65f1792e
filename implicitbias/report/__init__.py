"""The report: one Markdown file (plus PNG figures and their CSVs) covering every claim.

Sections are layout only: modules of ``implicitbias.report.sections``, each defining

    NAME: str         short id, used by ``implicitbias report --only NAME``
    ORDER: int        position in the report
    TITLE: str        heading
    exhibit(ctx)      optional: Markdown shown before the section's claims (tables and figures
                      that are not verdicts, e.g. the phase diagram or derived flows), laying out
                      what an exhibit module of ``implicitbias.claims`` computes: a section
                      imports and calls nothing that computes (``tests/test_claims_layer.py``)
    prefetch(ctx)     optional: calls the claims-layer function that trains (or finds in the
                      store) the cells the section will read, analysing nothing

and the claims of a section are the claims of ``implicitbias.claims`` whose ``section`` is its
NAME, each shown with its verdict, reason and details.  The writer puts every claim into one
table at the top.

Prefetch: with a local process pool, the sections that have a ``prefetch`` are computed ahead,
in the order of the report, by a background thread with its own connection to the store and its
own one-worker pool at the lowest priority (nice 19: it runs where the cores are idle, and does not
slow the sections being built), while the sections before them are built; a section then reads what is
stored, waits for a cell the prefetch is computing (its lease, ``Store.map``), and computes the
rest itself.  The records are the same whoever computes them (the same cell functions, one torch
thread per run), so the report is the same; only idle cores are filled (the main process's analysis
and the small cells of the Spec A sections leave them idle, ``benchmarks/RESULTS.md``).

One bad section does not cost the others: a claim or exhibit whose computation raises gets an
``error`` row (or paragraph) with the one-line cause, every other section is still built and the
report is written; ``Report.errors`` names the failures (the CLI then exits 2 naming them), and
what was computed before the failure stays in the store.
"""

from __future__ import annotations

import base64
import contextlib
import html
import importlib
import pkgutil
import re
import platform
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType

from implicitbias import __version__
from implicitbias.claims import TIERS, Context, Result, registry
from implicitbias.claims.judging import ClaimError, judge_claim, naming
from implicitbias.claims import table as claims_table
from implicitbias.figures import markdown_table
from implicitbias.store import Store
from implicitbias.theory import params

__all__ = ["Report", "TIERS", "available_sections", "build_report", "write_html"]


@dataclass
class Report:
    """What ``build_report`` wrote: the Markdown file (an HTML twin sits beside it), every row of the
    claims table, and the one-line cause of each claim or exhibit that failed to compute (empty when
    none did)."""

    path: Path
    claims: list[claims_table.Row]
    errors: list[str] = field(default_factory=list)

    def raise_errors(self) -> None:
        """A ``ClaimError`` naming every failure, after the report was written; nothing if none."""
        if self.errors:
            more = f" (and {len(self.errors) - 1} more, see the report)" if len(self.errors) > 1 else ""
            raise ClaimError(f"{self.errors[0]}{more}; the report with every other section is in {self.path}")


def available_sections() -> dict[str, ModuleType]:
    """The section modules by NAME, in report order."""
    pkg = importlib.import_module("implicitbias.report.sections")
    mods = [importlib.import_module(f"{pkg.__name__}.{m.name}") for m in pkgutil.iter_modules(pkg.__path__)]
    return {m.NAME: m for m in sorted(mods, key=lambda m: m.ORDER)}


def _claim_markdown(result: Result) -> str:
    c, v = result.claim, result.verdict
    head = f"### {result.name}: {c.statement}\n\n**{v.verdict}**: {v.reason} ({v.measured}). Source: {c.source}."
    return head + ("\n\n" + result.markdown.strip() if result.markdown.strip() else "") + "\n"


def _build_section(mod: ModuleType, ctx: Context, claims: list) -> tuple[str, list[claims_table.Row], list[str]]:
    parts, judgements, errors = [], [], []
    if hasattr(mod, "exhibit"):
        try:
            with naming(f"section {mod.NAME}"):
                parts.append(mod.exhibit(ctx))
        except ClaimError as exc:
            errors.append(str(exc))
            parts.append(f"**error**: {exc}\n")
    for claim in claims:
        judgement = judge_claim(claim, ctx)
        if judgement.error:
            errors.append(judgement.error)
            parts.append(f"### {claim.id}: {claim.statement}\n\n**error**: {judgement.error}\n")
        parts += [_claim_markdown(result) for result in judgement.results]
        judgements.append(judgement)
    return "\n".join(parts), claims_table.rows(judgements), errors


def _prefetch(jobs: Sequence[Callable], path: Path, tier: str, pool: Executor) -> None:
    """Run the sections' ``prefetch`` jobs in order on a store of their own at ``path``.  A failure
    is left to the section: what a job did not store, the section computes itself and reports
    there, so nothing is raised here (a prefetch only saves time)."""
    with contextlib.suppress(Exception), Store(path) as store:
        ctx = Context(store=store, tier=tier, executor=pool, progress=False)
        for job in jobs:
            with contextlib.suppress(Exception):
                job(ctx)


@contextlib.contextmanager
def _prefetching(jobs: Sequence[Callable], store: Store, tier: str, executor: Executor | None):
    """The prefetch thread (module docstring) while the body builds the sections: started only for a
    local process pool and a store file, joined when the body has finished; if the body raises (an
    interrupt), its one-worker pool is ended at once and the thread left to end with it."""
    from implicitbias.executors import open_executor

    if not jobs or not isinstance(executor, ProcessPoolExecutor) or not store.path.is_file():
        yield
        return
    with open_executor("process", 1, nice=19) as pool:
        thread = threading.Thread(target=_prefetch, args=(jobs, store.path, tier, pool), daemon=True,
                                  name="implicitbias-prefetch")
        thread.start()
        yield
        thread.join()


def build_report(
    out: str | Path,
    store: Store,
    *,
    tier: str = "default",
    only: list[str] | None = None,
    executor: Executor | None = None,
    progress: bool = True,
    data: str = "embed",
    provenance: bool = False,
) -> Report:
    """Build the report into folder ``out`` (``report.md``, ``report.html``, ``figures/``).

    ``data``: how
    report.html reaches its data files (``write_html``).  ``provenance``: the header names the
    host and the store's absolute path (default: the store's file name only, so a shared report
    says nothing of the machine that built it).
    """
    params.choice("tier", tier, TIERS)
    params.choice("data", data, DATA_LINKS)
    available = available_sections()
    for name in only or []:
        params.choice("only", name, available)
    claims = registry()
    chosen = []
    for name, mod in available.items():
        own = [c for c in claims.values() if c.section == name]
        if (only is None or name in only) and own:
            chosen.append((mod, own))
    ctx = Context(store=store, out=Path(out), tier=tier, executor=executor, progress=progress)
    ctx.out.mkdir(parents=True, exist_ok=True)

    built: list[tuple[str, str, list[claims_table.Row], float]] = []
    errors: list[str] = []
    jobs = [mod.prefetch for mod, _ in chosen if hasattr(mod, "prefetch")]
    with _prefetching(jobs, store, tier, executor):
        for mod, own in chosen:
            if progress:
                print(f"[report] {mod.TITLE} ...", flush=True)
            t0 = time.perf_counter()
            markdown, rows, failed = _build_section(mod, ctx, own)
            built.append((mod.TITLE, markdown, rows, time.perf_counter() - t0))
            errors += failed

    rows = [r for *_, section_rows, _ in built for r in section_rows]
    lines = [
        "# implicitbias report",
        "",
        f"implicitbias {__version__}, tier `{tier}`, built {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC "
        + (f"on {platform.node() or 'unknown host'} " if provenance else "")
        + f"({platform.machine()}, Python {platform.python_version()}); "
        f"store `{store.path.resolve() if provenance else store.path.name}`.",
        "",
        "Depth convention: L counts weight matrices; the features are one more factor, N = L + 1.",
        "",
        "## Claims",
        "",
        claims_table.markdown(rows) if rows else "(no section produced claims)",
        "",
        markdown_table(["section", "seconds"], [[title, f"{dt:.1f}"] for title, _, _, dt in built]),
        "",
    ]
    for title, markdown, _, _ in built:
        lines += [f"## {title}", "", markdown.strip(), ""]
    report = ctx.out / "report.md"
    report.write_text("\n".join(lines))
    claims_table.write_csv(rows, ctx.out / "claims.csv")
    write_html(report, data=data)
    return Report(report, rows, errors)


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 72rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.45; color: #1b1b1b; }
table { border-collapse: collapse; margin: 1rem 0; font-size: 0.9rem; }
th, td { border: 1px solid #ccc; padding: 0.25rem 0.5rem; vertical-align: top; }
th { background: #f2f2f2; }
img { max-width: 100%; }
code, pre { background: #f6f6f6; }
pre { padding: 0.5rem; overflow-x: auto; }
nav.contents { background: #f8f8f8; border: 1px solid #ddd; padding: 0.5rem 1rem; margin: 1rem 0; font-size: 0.9rem; }
nav.contents ul { margin: 0.2rem 0; padding-left: 1.2rem; }
math[display="block"] { margin: 0.4rem 0; overflow-x: auto; }
.verdict { display: inline-block; padding: 0.05rem 0.45rem; border-radius: 0.6rem; font-weight: 600;
           white-space: nowrap; border: 1px solid transparent; }
.verdict-agrees { background: #dff3e3; color: #0b5d1e; border-color: #7cc48b; }
.verdict-disagrees { background: #fde2e1; color: #8a1010; border-color: #e58c8a; }
.verdict-inconclusive { background: #fff3cd; color: #6b4e00; border-color: #e5c66b; }
.verdict-not-run { background: #ececec; color: #444; border-color: #bbb; }
.verdict-error { background: #8a1010; color: #fff; }
.verdict-agrees::before { content: "\\2714\\FE0E  "; }
.verdict-disagrees::before { content: "\\2718\\FE0E  "; }
.verdict-inconclusive::before { content: "? "; }
"""

# TeX in the Markdown: $$ display $$ and $ inline $ (a $ followed by a digit or a space opens nothing)
_DISPLAY_MATH = re.compile(r"\$\$(.+?)\$\$", re.S)
_INLINE_MATH = re.compile(r"(?<![\\$\w])\$(?=[^\s$\d])([^$\n]+?)(?<=\S)\$(?![\w$])")
_CODE = re.compile(r"```.*?```|`[^`\n]*`", re.S)
_VERDICT_WORDS = ("agrees", "disagrees", "inconclusive", "not run", "error")


def _mathml(tex: str, display: bool) -> str:
    """MathML of ``tex`` (latex2mathml, offline): a display formula with ``\\\\`` line breaks becomes
    one block per line (MathML Core, which browsers render, has no line breaks); TeX that
    latex2mathml cannot read is shown as TeX in a ``code`` element, never with its dollars."""
    from latex2mathml.converter import convert

    lines = [tex] if not display or r"\begin" in tex else [t for t in re.split(r"\\\\", tex) if t.strip()]
    out = []
    for line in lines:
        try:
            out.append(convert(line.strip(), display="block" if display else "inline"))
        except Exception:  # latex2mathml raises its own errors (and some of Python's) on TeX it lacks
            out.append(f'<code class="tex">{html.escape(line.strip())}</code>')
    return "".join(out)


def _stash_math(text: str) -> tuple[str, list[str]]:
    """The Markdown with every formula outside code replaced by a placeholder, and the MathML of
    each (formulas are converted before Markdown can read their backslashes and underscores)."""
    formulas: list[str] = []

    def keep(mathml: str) -> str:
        formulas.append(mathml)
        return f"IBMATH{len(formulas) - 1}IBMATH"  # letters and digits: Markdown leaves them alone

    def convert_math(chunk: str) -> str:
        chunk = _DISPLAY_MATH.sub(lambda m: keep(_mathml(m.group(1), True)), chunk)
        return _INLINE_MATH.sub(lambda m: keep(_mathml(m.group(1), False)), chunk)

    parts, last = [], 0
    for code in _CODE.finditer(text):
        parts += [convert_math(text[last:code.start()]), code.group(0)]
        last = code.end()
    parts.append(convert_math(text[last:]))
    return "".join(parts), formulas


def _badges(body: str) -> str:
    """Verdict words in table cells and in bold as coloured badges (the word kept: colour is not
    the only signal)."""
    words = "|".join(_VERDICT_WORDS)

    def badge(word: str) -> str:
        return f'<span class="verdict verdict-{word.replace(" ", "-")}">{word}</span>'

    body = re.sub(rf"<td>({words})</td>", lambda m: f"<td>{badge(m.group(1))}</td>", body)
    return re.sub(rf"<strong>({words})</strong>", lambda m: f"<strong>{badge(m.group(1))}</strong>", body)


def _contents(tokens: list[dict]) -> str:
    """A nested list linking every section (##) and every claim or sub-heading under it."""

    def items(nodes: list[dict]) -> str:
        return "".join(f'<li><a href="#{n["id"]}">{n["name"]}</a>'
                       + (f"<ul>{items(n['children'])}</ul>" if n["children"] else "") + "</li>" for n in nodes)

    top = [n for t in tokens for n in (t["children"] if t["level"] == 1 else [t])]
    return f'<nav class="contents"><strong>Contents</strong><ul>{items(top)}</ul></nav>' if top else ""


def _link_claims(body: str, tokens: list[dict]) -> str:
    """Claim names in the first column of the claims table link to the claim's own heading."""
    anchors = {}
    for t in _flatten(tokens):
        name = html.unescape(t["name"]).split(": ", 1)[0]
        anchors.setdefault(name, t["id"])

    def link(m: re.Match) -> str:
        name = html.unescape(m.group(1))
        return f'<tr>\n<td><a href="#{anchors[name]}">{m.group(1)}</a></td>' if name in anchors else m.group(0)

    return re.sub(r"<tr>\n<td>([^<]+)</td>", link, body)


def _flatten(tokens: list[dict]) -> list[dict]:
    return [n for t in tokens for n in (t, *_flatten(t["children"]))]


DATA_LINKS = ("embed", "absolute", "relative")
_MIME = {".csv": "text/csv", ".npz": "application/octet-stream", ".json": "application/json", ".md": "text/markdown"}


def _figure_data(body: str, folder: Path) -> str:
    """After each figure, a link to the CSV of its numbers (saved beside its PNG)."""
    def link(m: re.Match) -> str:
        csv = (folder / html.unescape(m.group(1))).with_suffix(".csv")
        if not csv.is_file():
            return m.group(0)
        href = html.escape(csv.relative_to(folder).as_posix())
        return f'{m.group(0)}<br><a class="figure-data" href="{href}">numbers of this figure (CSV)</a>'

    return re.sub(r'<img [^>]*src="([^"]+\.png)"[^>]*>', link, body)


def _data_links(body: str, folder: Path, data: str) -> str:
    """Links to the report's own files (``href`` relative to ``folder``) as ``data`` says: embedded
    as data URIs (``embed``: the page travels alone), as absolute ``file:`` URIs (``absolute``: the
    page may move, the files stay), or left relative (``relative``: the folder travels whole)."""
    def rewrite(m: re.Match) -> str:
        path = folder / html.unescape(m.group(1))
        if data == "relative" or not path.is_file():
            return m.group(0)
        if data == "absolute":
            return f'href="{html.escape(path.resolve().as_uri())}"'
        encoded = base64.b64encode(path.read_bytes()).decode()
        mime = _MIME.get(path.suffix, "application/octet-stream")
        return f'href="data:{mime};base64,{encoded}" download="{html.escape(path.name)}"'

    return re.sub(r'href="(?![a-z][a-z0-9+.-]*:|#|/)([^"]+)"', rewrite, body)


def write_html(report: Path, data: str = "embed") -> Path:
    """A self-contained HTML page of ``report`` (Markdown), readable offline in any browser.

    Figures are embedded as data URIs, each followed by a link to the CSV of its numbers; the
    data files it links (CSV, npz) are embedded, linked by absolute ``file:`` URIs or left
    relative, as ``data`` (one of ``DATA_LINKS``) says; TeX (``$$ ... $$``, ``$ ... $``) is
    rendered as MathML (latex2mathml: no script, no CDN); a contents list links every section and
    every claim (and the claims table's names link to the claims); verdicts are coloured badges
    that keep the word."""
    import markdown

    params.choice("data", data, DATA_LINKS)
    text, formulas = _stash_math(report.read_text())
    md = markdown.Markdown(extensions=["tables", "fenced_code", "toc"], extension_configs={"toc": {"toc_depth": "1-4"}})
    body = md.convert(text)
    body = re.sub(r"IBMATH(\d+)IBMATH", lambda m: formulas[int(m.group(1))], body)
    tokens = md.toc_tokens
    body = _link_claims(_badges(body), tokens)

    def embed(match: re.Match) -> str:
        src = html.unescape(match.group(1))
        path = report.parent / src
        if not path.is_file():
            return match.group(0)
        data = base64.b64encode(path.read_bytes()).decode()
        return f'src="data:image/png;base64,{data}"'

    body = _data_links(_figure_data(body, report.parent), report.parent, data)
    body = re.sub(r'src="([^"]+\.png)"', embed, body)
    first_section = body.find("<h2")
    body = body[:first_section] + _contents(tokens) + body[first_section:] if first_section >= 0 else body
    page = (
        "<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'><title>implicitbias report</title>"
        f"<style>{_STYLE}</style></head><body>\n{body}\n</body></html>\n"
    )
    out = report.with_suffix(".html")
    out.write_text(page)
    return out
