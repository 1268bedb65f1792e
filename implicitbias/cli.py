"""Command line: ``implicitbias <command> ...``.

Commands live one per module in ``implicitbias.commands``; each module defines
``register(subparsers)`` which adds its parser and sets ``func``.  Command modules import only
what their parser needs at the top and the science inside ``run``, and only the module of the
command being run is imported (all of them for ``implicitbias --help``), so a command starts in
well under a second and one broken command cannot break another.  Bad input (a
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


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names is registered (when it names one)."""
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
    names = sorted(m.name for m in pkgutil.iter_modules(commands.__path__))
    command = _command_of(argv or [])
    for name in [command] if command in names else names:
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The first positional argument (the command), skipping the global ``--store PATH``."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--store":
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser(argv).parse_args(argv)
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
