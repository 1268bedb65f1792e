"""Command line: ``implicitbias <command> ...``.

Commands live one per module in ``implicitbias.commands``; each module defines
``register(subparsers)`` which adds its parser and sets ``func``.  Bad input (a
``ParameterError`` or an argparse error) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from implicitbias import __version__, commands
from implicitbias.theory.params import ParameterError

__all__ = ["main", "build_parser"]


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is a single line (no usage dump) with exit status 2."""

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="implicitbias",
        description="Executable checks of the implicit bias of depth and of forgetting clocks.",
    )
    parser.add_argument("--version", action="version", version=f"implicitbias {__version__}")
    parser.add_argument(
        "--store",
        metavar="PATH",
        help="SQLite results store (default: $IMPLICITBIAS_STORE or ~/.cache/implicitbias/store.sqlite)",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        importlib.import_module(f"{commands.__name__}.{info.name}").register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        status = args.func(args)
    except ParameterError as exc:
        print(f"implicitbias {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("implicitbias: interrupted; completed work is in the store, rerun to resume", file=sys.stderr)
        return 130
    return int(status or 0)


if __name__ == "__main__":
    sys.exit(main())
