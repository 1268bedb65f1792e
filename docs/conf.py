"""Sphinx configuration of the implicitbias documentation (``.ci/docs`` builds it with -W).

Markdown pages are read by MyST; the API reference is autodoc with napoleon; the gallery
(``docs/examples/plot_*.py``) is executed by sphinx-gallery at every build and draws its figures;
the page of claims is generated from the claims registry (``_claims_page``) before reading.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
os.environ.setdefault("MPLBACKEND", "Agg")

import implicitbias  # noqa: E402

HERE = Path(__file__).parent

project = "implicitbias"
author = "the implicitbias authors"
copyright = "2026, the implicitbias authors"
release = version = implicitbias.__version__

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
]
source_suffix = {".rst": "restructuredtext", ".md": "markdown"}
exclude_patterns = [
    "_build",
    "figures",
    "examples",
    "gallery/*.md5",
    "gallery/*.py",
    "gallery/*.ipynb",
    "gallery/*.zip",
]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "show-inheritance": False}
napoleon_numpy_docstring = True
napoleon_google_docstring = False
nitpicky = False

html_theme = "alabaster"
html_theme_options = {
    "description": "the implicit bias of depth and forgetting clocks, executable",
    "fixed_sidebar": True,
}
html_static_path: list[str] = []

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py|lab_pipeline\.py",  # the own-model example's module, not an example
    "download_all_examples": False,
    "remove_config_comments": True,
    "within_subsection_order": "FileNameSortKey",
    "abort_on_example_error": True,
    "show_memory": False,
    "write_computation_times": False,
}


def _claims_page() -> str:
    """Markdown of every claim: slug, id, statement, source, section, what ``judge`` can return and
    every named threshold with its justification (read from ``implicitbias.claims``)."""
    from implicitbias.claims import by_slug

    lines = [
        "# The claims and their rules",
        "",
        "Generated from the claims registry at every build (`implicitbias.claims`). The slug is what",
        "`ib.check(slug)` takes; the thresholds are the numbers the rule compares against, each with the",
        "reason it has its value. Depth L counts weight matrices.",
        "",
    ]
    for slug, claim in by_slug().items():
        lines += [
            f"## `{slug}`: {claim.id}",
            "",
            claim.statement,
            "",
            f"- source: {claim.source}",
            f"- report section: `{claim.section}`",
            f"- part of `implicitbias verify`: {'yes' if claim.verify else 'no'}",
            f"- outcomes its rule can give: {', '.join(claim.outcomes)}",
            "",
        ]
        if claim.thresholds:
            lines += ["| threshold | value | why |", "|---|---|---|"]
            lines += [
                f"| `{name}` | {t.value:g} | {' '.join(t.why.split()).replace('|', '/')} |"
                for name, t in claim.thresholds.items()
            ]
            lines.append("")
    return "\n".join(lines) + "\n"


def _write_generated(app) -> None:
    out = HERE / "generated"
    out.mkdir(exist_ok=True)
    page = out / "claims.md"
    text = _claims_page()
    if not page.is_file() or page.read_text() != text:
        page.write_text(text)


def setup(app):
    app.connect("builder-inited", _write_generated)
