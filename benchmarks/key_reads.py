"""String-key reads in Python source: the measure of issue 29 item 1 ("string-key reads counted before and after").

A read is ``x["key"]`` (a subscript in load context whose index is a ``str`` constant) or
``x.get("key", ...)`` (a call of a ``.get`` attribute whose first argument is a ``str`` constant).
Writes (``x["key"] = v``), subscripts by a variable (``d[name]``) and keyword arguments are not
counted.  Counted with ``ast`` per file, over every ``*.py`` under the paths given.

    python benchmarks/key_reads.py implicitbias/claims validation

prints one line per file (count, path) and the total; ``--by-folder`` adds a total per folder.
"""

from __future__ import annotations

import argparse
import ast
from collections import Counter
from pathlib import Path


def key_reads(source: str) -> int:
    """The number of string-key reads (module docstring) in Python ``source``."""
    n = 0
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
            n += isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
            n += bool(node.args) and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    return n


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", help="folders (or files) to count")
    parser.add_argument("--by-folder", action="store_true", help="also print a total per folder")
    args = parser.parse_args(argv)
    counts = {str(p): key_reads(p.read_text()) for root in map(Path, args.paths)
              for p in (sorted(root.rglob("*.py")) if root.is_dir() else [root])}
    for path, n in counts.items():
        print(f"{n:5d} {path}")
    if args.by_folder:
        folders = Counter()
        for path, n in counts.items():
            folders[str(Path(path).parent)] += n
        for folder, n in sorted(folders.items()):
            print(f"{n:5d} {folder}/ (folder)")
    print(f"{sum(counts.values()):5d} total")


if __name__ == "__main__":
    main()
