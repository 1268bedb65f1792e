"""How results show themselves in a notebook: one HTML table and one LaTeX block for every type.

IPython displays an object by its ``_repr_html_`` (or ``_repr_latex_``) where it has one, else by
``repr``.  Every tabular result of the package derives from ``Tabular``: it defines ``to_frame``
(a pandas DataFrame, tidy: one row per observation, one column per variable) and gets ``to_csv``
and ``_repr_html_`` from it; its HTML is pandas' own ``DataFrame.to_html`` (escaped) under a one
line caption (``html_table``), so every result reads alike and no class writes HTML by hand.
Derivations (sympy expressions) show as LaTeX through ``latex_block``, with ``sympy.latex``
doing the printing.  pandas is imported when a table is made, so importing a result type stays
cheap.  This module sits in the lowest layer so that every layer's results can use it.
"""

from __future__ import annotations

import html
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["MAX_ROWS", "Tabular", "html_table", "field_frame", "latex_block"]

MAX_ROWS = 40  # rows a notebook table shows before pandas elides the middle ones


def html_table(frame: pd.DataFrame, caption: str = "", *, index: bool = False) -> str:
    """``frame`` as an HTML table (``DataFrame.to_html``, escaped, at most ``MAX_ROWS`` rows) under
    ``caption`` (escaped) in bold."""
    head = f"<p><strong>{html.escape(caption)}</strong></p>" if caption else ""
    return f"<div>{head}{frame.to_html(index=index, max_rows=MAX_ROWS, border=0, escape=True)}</div>"


def field_frame(fields: Mapping[str, Any]) -> pd.DataFrame:
    """A two-column table (field, value) of one object's named values: how a single result shows."""
    import pandas as pd

    return pd.DataFrame({"field": list(fields), "value": [str(v) for v in fields.values()]})


def latex_block(lines: Iterable[str]) -> str:
    """LaTeX lines (already printed by ``sympy.latex``) as one display-math block, one per row, as
    Jupyter's ``_repr_latex_`` expects (``$\\displaystyle ...$``)."""
    return r"$\displaystyle \begin{aligned}" + r" \\ ".join(lines) + r"\end{aligned}$"


class Tabular:
    """A result that is a table: ``to_frame()`` (defined by the class), ``to_csv`` and the notebook's
    HTML table (``_repr_html_``: ``_display_frame()`` under ``_caption()``; both default to the whole
    frame and the class name)."""

    def to_frame(self) -> pd.DataFrame:
        raise NotImplementedError

    def _caption(self) -> str:
        return type(self).__name__

    def _display_frame(self) -> pd.DataFrame:
        return self.to_frame()

    def to_csv(self, path: str | os.PathLike) -> Path:
        """Write ``to_frame()`` as CSV (a header row, no index) to ``path``; returns the path."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.to_frame().to_csv(path, index=False)
        return path

    def _repr_html_(self) -> str:
        return html_table(self._display_frame(), self._caption())
