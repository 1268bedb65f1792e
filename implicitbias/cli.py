"""Command line: ``implicitbias <command> ...``.

Commands live one per module in ``implicitbias.commands``; each module defines
``register(subparsers)`` which adds its parser and sets ``func``.  Command modules import only
what their parser needs at the top and the science inside ``run``, and only the module of the
command being run is imported (all of them for ``implicitbias --help``), so a command starts in
well under a second and one broken command cannot break another.

One error path: every failure a user can cause or meet is one line on stderr and exit status 2,
never a traceback: bad options (argparse), bad values (``ParameterError``, which includes a
store file that cannot be used, ``StoreError``), files and folders the system refuses
(``OSError``), a store that goes bad during a run (``sqlite3.DatabaseError``), a cell or claim
whose computation raised (named in the line; the store records it as failed).  Anything else is
a bug and is also one line, marked "internal error", with exit status 2; set
``IMPLICITBIAS_TRACEBACK=1`` to see its traceback.  ``verify`` exits 1 when a claim disagrees.
"""

from __future__ import annotations

import argparse
import importlib
import os
import pkgutil
import sqlite3
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
    try:
        args = build_parser(argv).parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line argparse error
        return exc.code if isinstance(exc.code, int) else 2
    where = f"implicitbias {args.command}"
    try:
        if args.store is not None and not args.store.strip():
            raise ParameterError("store must be the path of an SQLite file (created if missing), got ''")
        status = args.func(args)
    except KeyboardInterrupt:
        print("implicitbias: interrupted; completed work is in the store, rerun to resume", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("IMPLICITBIAS_TRACEBACK") and not isinstance(exc, ParameterError):
            raise
        print(f"{where}: {error_line(exc)}", file=sys.stderr)
        return 2
    return int(status or 0)


def error_line(exc: BaseException) -> str:
    """The one line (``error: ...``) that stands for ``exc`` on the command line."""
    from implicitbias.store import CellError

    if isinstance(exc, ParameterError):
        text = str(exc)
    elif isinstance(exc, OSError) and exc.strerror:
        where = f" {exc.filename}" if exc.filename is not None else ""
        text = f"cannot use{where}: {exc.strerror}"
    elif isinstance(exc, sqlite3.DatabaseError):
        text = f"the store failed during the run ({exc}); completed records are kept, rerun to resume"
    elif isinstance(exc, CellError):  # a cell or a claim whose computation raised, named
        text = str(exc)
    else:
        return f"internal error (a bug, please report it with the command line): {type(exc).__name__}: {exc}".split("\n")[0]
    return "error: " + " ".join(text.split())


if __name__ == "__main__":
    sys.exit(main())
