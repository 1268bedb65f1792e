"""The built documentation site (``.ci/docs`` writes docs/_build/html): every formula is marked up
for MathJax, MathJax is served from the site itself (no CDN, so the pages read offline), no TeX is
left raw in the text, and in a real browser (headless Chromium) every formula of every page is
rendered.  Both tests skip, saying why, where the site has not been built; ``.ci/run`` runs them,
the browser's in the slow tier too, right after ``.ci/docs`` has built it
(``python -m pytest tests/test_docs_site.py -m ""``).  ``IMPLICITBIAS_DOCS_HTML`` points them at a
site built elsewhere."""

from __future__ import annotations

import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import browser
import pytest

SITE = Path(os.environ.get("IMPLICITBIAS_DOCS_HTML", Path(__file__).resolve().parents[1] / "docs" / "_build" / "html"))
MATHJAX = SITE / "_static" / "mathjax" / "tex-chtml.js"
# pages that state formulas in their sources: each must show rendered mathematics
WITH_FORMULAS = [
    "index.html",
    "conventions.html",
    "api.html",
    "tutorials/phase-diagram.html",
    "tutorials/clocks.html",
    "generated/implicitbias.phase_diagram.html",
    "generated/implicitbias.singular_value_ode.html",
    "generated/implicitbias.forgetting_clocks.html",
    "generated/implicitbias.PhaseCell.html",
    "gallery/plot_own_model.html",
]
# TeX a reader must never see: a $...$ or $$...$$ pair, \( \) or \[ \] delimiters, a TeX command
RAW_TEX = re.compile(r"\$\$|\$[^$\s][^$\n]*\$|\\[(\[]|\\(frac|sum|sigma|eta|lambda|mathrm|bar)(?![A-Za-z])")

needs_site = pytest.mark.skipif(
    not MATHJAX.is_file(),
    reason=f"no documentation site with MathJax at {SITE} (build it with .ci/docs; CI runs this test after it)",
)


def _pages() -> list[Path]:
    skip = {"_static", "_sources", "_modules", "_images", "_downloads"}
    return sorted(p for p in SITE.rglob("*.html") if not skip & set(p.relative_to(SITE).parts))


def _prose(html: str) -> str:
    """The page's visible text outside code, formulas, scripts and styles."""
    bs4 = pytest.importorskip("bs4")
    soup = bs4.BeautifulSoup(html, "html.parser")
    for tag in soup.select("script, style, pre, code, kbd, .math, mjx-container, .highlight, textarea"):
        tag.decompose()
    return soup.get_text(" ")


@needs_site
def test_site_marks_up_formulas_and_serves_mathjax_itself():
    pages = _pages()
    assert len(pages) > 30
    for page in pages:
        html = page.read_text()
        sources = re.findall(r"<script[^>]*\bsrc=\"([^\"]+)\"", html)
        assert not [s for s in sources if re.match(r"(https?:)?//", s)], f"{page}: a script from the network"
        if 'class="math' in html:
            assert any(s.split("?")[0].endswith("_static/mathjax/tex-chtml.js") for s in sources), (
                f"{page}: MathJax not loaded"
            )
        raw = [m.group(0) for m in RAW_TEX.finditer(_prose(html))]
        assert not raw, f"{page.relative_to(SITE)}: raw TeX in the text: {raw[:5]}"
    for name in WITH_FORMULAS:
        assert 'class="math' in (SITE / name).read_text(), f"{name}: no formula"


@needs_site
def test_gallery_notebooks_carry_no_raw_directives():
    """The gallery's downloadable notebooks: Markdown cells without reStructuredText directives
    (sphinx-gallery converts text, not directives such as ``.. literalinclude::``), and the
    own-model example writes the module its spec names, so the notebook runs on its own."""
    notebooks = sorted(SITE.glob("_downloads/*/*.ipynb"))
    assert len(notebooks) >= 4
    for path in notebooks:
        cells = json.loads(path.read_text())["cells"]
        text = ["".join(c["source"]) for c in cells if c["cell_type"] == "markdown"]
        directives = [line for cell in text for line in cell.splitlines() if re.match(r"\s*\.\. \w[\w-]*::", line)]
        assert not directives, f"{path.name}: raw directives {directives}"
    own = next(p for p in notebooks if p.name == "plot_own_model.ipynb")
    code = "".join("".join(c["source"]) for c in json.loads(own.read_text())["cells"] if c["cell_type"] == "code")
    assert "lab_pipeline.py" in code and "def small_cnn" in code


# Runs in the page once MathJax has typeset it; its JSON is read back from the dumped DOM.
PROBE = """<script>
window.addEventListener("load", () => {
  const report = () => {
    const sources = [...document.querySelectorAll(".math")];
    const rendered = document.querySelectorAll("mjx-container");
    const probe = document.createElement("pre");
    probe.id = "probe";
    probe.textContent = JSON.stringify({
      formulas: sources.length,
      rendered: rendered.length,
      unrendered: sources.filter((m) => !m.querySelector("mjx-container")).map((m) => m.textContent).slice(0, 5),
      sized: [...rendered].filter((m) => m.getBoundingClientRect().width > 0).length,
      errors: document.querySelectorAll("mjx-merror").length,
    });
    document.body.appendChild(probe);
  };
  if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
    MathJax.startup.promise.then(report, report);
  } else {
    report();
  }
});
</script>"""


def _rendered(page: Path, profile: Path) -> dict:
    """The probe's counts for ``page`` in headless Chromium, opened over file:// as a probed copy
    beside it (so that its relative links to _static/ resolve)."""
    probed = page.with_name(f"_probe_{page.name}")
    try:
        return browser.probe(page.read_text(), PROBE, probed, profile, budget_ms=15_000)
    finally:
        probed.unlink(missing_ok=True)


@pytest.mark.slow  # about 40 s on 2 cores: one browser per page with formulas
@needs_site
@browser.needs_chromium
def test_every_formula_renders_in_a_browser(tmp_path):
    """Every page of the site in headless Chromium: each formula MathJax was given is typeset, with
    a size, without a TeX error, and the pages known to state formulas show some."""
    pages = [p for p in _pages() if 'class="math' in p.read_text()]
    with ThreadPoolExecutor(2) as pool:
        found = pool.map(lambda i: _rendered(pages[i], tmp_path / f"profile{i}"), range(len(pages)))
        probes = dict(zip(pages, found, strict=True))
    for page, probe in probes.items():
        name = page.relative_to(SITE)
        assert probe["formulas"] > 0 and not probe["unrendered"], f"{name}: formulas left unrendered {probe}"
        assert probe["rendered"] >= probe["formulas"] and probe["sized"] == probe["rendered"], f"{name}: {probe}"
        assert probe["errors"] == 0, f"{name}: MathJax could not typeset a formula {probe}"
    assert {SITE / n for n in WITH_FORMULAS} <= set(probes)
