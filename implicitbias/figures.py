"""Figures: matplotlib (Agg), each PNG saved next to a CSV of the numbers it plots."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

__all__ = ["plt", "save_figure", "write_csv", "markdown_table"]


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


def save_figure(fig, path: str | Path, columns: Mapping[str, Sequence]) -> Path:
    """Save ``fig`` as ``path`` (PNG) and the plotted numbers as the same name with ``.csv``."""
    path = Path(path).with_suffix(".png")
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=130, bbox_inches="tight")
    plt.close(fig)
    write_csv(path.with_suffix(".csv"), columns)
    return path


def markdown_table(header: Sequence[str], rows: Sequence[Sequence]) -> str:
    """A GitHub-flavoured Markdown table."""
    lines = ["| " + " | ".join(map(str, header)) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)
