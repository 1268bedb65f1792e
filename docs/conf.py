"""Sphinx configuration of the implicitbias documentation (``.ci/docs`` builds it with -W).

Markdown pages are read by MyST-NB, which executes the tutorials (``{code-cell}`` blocks) at every
build and keeps their outputs and figures; the API reference is autosummary (one page per public
object, listed from ``implicitbias.__all__`` by ``_api_page``) with napoleon reading the numpydoc
sections; the gallery (``docs/examples/plot_*.py``) is executed by sphinx-gallery and draws its
figures; the CLI reference is sphinx-argparse over ``implicitbias.cli.build_parser``; the page of
claims is generated from the claims registry (``_claims_page``) before reading.  Mathematics is
MathJax 3, served from the built site (``sphinx-mathjax-offline``), so the pages work offline.
"""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # the gallery's examples run in this process and draw off screen
# the tutorials' kernels are other processes: without MPLBACKEND, ipykernel selects its inline
# backend and a cell's figure becomes the cell's PNG output (.ci/docs exports MPLBACKEND=Agg)
os.environ.pop("MPLBACKEND", None)

import implicitbias  # noqa: E402

HERE = Path(__file__).parent

project = "implicitbias"
author = "the implicitbias authors"
copyright = "2026, the implicitbias authors"
release = version = implicitbias.__version__

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.mathjax",
    "sphinx-mathjax-offline",  # MathJax 3 copied into _static/mathjax: no CDN
    "sphinx.ext.viewcode",
    "sphinx_gallery.gen_gallery",
    "sphinxarg.ext",
]
source_suffix = {".rst": "restructuredtext", ".md": "myst-nb"}
smartquotes = False  # "--out" stays two hyphens and code-like text keeps its straight quotes
exclude_patterns = [
    "_build",
    "figures",
    "examples",
    "_templates",
    "gallery/*.md5",
    "gallery/*.py",
    "gallery/*.ipynb",
    "gallery/*.zip",
]
myst_enable_extensions = ["dollarmath", "amsmath", "colon_fence"]
myst_heading_anchors = 3
myst_dmath_double_inline = True

# the tutorials run at every build (CI builds from scratch); an error in a cell fails the build
nb_execution_mode = "force"
nb_execution_raise_on_error = True
nb_execution_timeout = 300
nb_execution_show_tb = True
nb_merge_streams = True
nb_output_stderr = "remove"  # tqdm's notice that ipywidgets is missing is not part of a tutorial
nb_execution_in_temp = True  # a cell that writes files (to_csv) writes them in a temporary folder


autodoc_member_order = "bysource"
autodoc_typehints = "none"  # the signature shows the types; the Parameters section says what they mean
autodoc_default_options = {"show-inheritance": False}
autosummary_generate = True
autosummary_imported_members = True
napoleon_numpy_docstring = True
napoleon_google_docstring = False
napoleon_use_rtype = False
nitpicky = False

html_theme = "pydata_sphinx_theme"
html_title = "implicitbias"
html_theme_options = {
    "navigation_with_keys": False,
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_static_path = ["_static"]
templates_path = ["_templates"]  # autosummary/class.rst: a class page documents its members
html_css_files = ["wide.css"]

sphinx_gallery_conf = {
    "examples_dirs": "examples",
    "gallery_dirs": "gallery",
    "filename_pattern": r"/plot_",
    "ignore_pattern": r"__init__\.py",
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
