"""Figures: ``matplotlib.figure.Figure`` objects, each PNG saved next to a CSV of the numbers it plots.

The package never selects a matplotlib backend and never draws through pyplot: a figure is a
``Figure`` made here (``subplots``, ``new_figure``), which pyplot's registry does not hold, and
``Figure.savefig`` renders a PNG with the Agg canvas whatever the user's backend is.  So a
notebook's ``%matplotlib inline`` and a script's own ``plt.plot(); plt.show()`` are left alone,
as scikit-learn's displays leave them.  A figure returned to a notebook shows as PNG: through the
formatter for ``Figure`` that ``%matplotlib inline`` registers, and where none is registered (a fresh
kernel that never resolved pyplot's backend, where a plain ``Figure`` shows as ``<Figure size ...>``)
through the figure's own ``_repr_png_`` (``ShownFigure``); ``ax=`` arguments draw into the user's own
Axes instead (``target_axes``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from matplotlib.axes import Axes
from matplotlib.figure import Figure, FigureBase

from implicitbias.theory.params import ParameterError

__all__ = ["ShownFigure", "new_figure", "subplots", "target_axes", "save_figure", "write_csv", "markdown_table"]


class ShownFigure(Figure):
    """A ``Figure`` that IPython shows as PNG when it is a cell's value.  IPython asks an object for
    ``_repr_png_`` only when no formatter is registered for its type; matplotlib-inline registers one for
    ``Figure`` when ``%matplotlib inline`` runs or pyplot resolves its backend, and then that one draws
    it, so the figure is shown once either way."""

    def _repr_png_(self) -> bytes:
        buffer = io.BytesIO()
        self.savefig(buffer, format="png", bbox_inches="tight")
        return buffer.getvalue()


def new_figure(figsize: tuple[float, float] | None = None, **kwargs: Any) -> Figure:
    """A ``ShownFigure`` outside pyplot's registry (no backend chosen, nothing left open)."""
    return ShownFigure(figsize=figsize, **kwargs)


def subplots(nrows: int = 1, ncols: int = 1, *, figsize: tuple[float, float] | None = None, **kwargs: Any):
    """``plt.subplots`` without pyplot: ``(figure, axes)`` of a ``new_figure`` (keywords go to
    ``Figure.subplots``: ``sharex``, ``squeeze``, ``subplot_kw``...)."""
    fig = new_figure(figsize)
    return fig, fig.subplots(nrows, ncols, **kwargs)


def target_axes(
    ax: Any, count: int, figsize: tuple[float, float], name: str = "ax", **figure_kw: Any
) -> tuple[FigureBase, list[Axes]]:
    """The figure and ``count`` Axes a ``plot(ax=...)`` draws into.

    ``ax``: None (a new figure of ``figsize``), a ``Figure`` or ``SubFigure`` (``count`` panels
    added to it in a row), one ``Axes`` (when ``count`` is 1) or a sequence of ``count`` Axes.
    Anything else is a ``ParameterError`` naming ``name``.  ``figure_kw`` go to a new figure
    (``layout="constrained"``...).
    """
    if ax is None:
        fig = new_figure(figsize, **figure_kw)
        return fig, list(fig.subplots(1, count, squeeze=False)[0])
    if isinstance(ax, FigureBase):
        return ax, list(ax.subplots(1, count, squeeze=False)[0])
    if isinstance(ax, Axes):
        axes = [ax]
    elif hasattr(ax, "flat"):  # the numpy array of Axes plt.subplots returns
        axes = list(ax.flat)
    elif isinstance(ax, Sequence) and not isinstance(ax, str):
        axes = list(ax)
    else:
        axes = []
    if len(axes) != count or not all(isinstance(a, Axes) for a in axes):
        what = "a matplotlib Axes" if count == 1 else f"a sequence of {count} matplotlib Axes"
        raise ParameterError(f"{name} must be None, a matplotlib Figure or {what}, got {type(ax).__name__}")
    return axes[0].figure, axes


def write_csv(path: str | Path, columns: Mapping[str, Sequence]) -> Path:
    """Write equal-length columns to ``path`` as CSV with a header row."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    names = list(columns)
    lengths = {len(columns[n]) for n in names}
    if len(lengths) > 1:
        raise ValueError(f"columns of {path.name} have different lengths: {sorted(lengths)}")
    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(names)
        writer.writerows(zip(*(columns[n] for n in names)))
    return path


def save_figure(fig: FigureBase, path: str | Path, columns: Mapping[str, Sequence]) -> Path:
    """Save ``fig`` as ``path`` (PNG) and the plotted numbers as the same name with ``.csv``."""
    path = Path(path).with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    write_csv(path.with_suffix(".csv"), columns)
    return path


def markdown_table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)
