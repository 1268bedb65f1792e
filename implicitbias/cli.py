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
``IMPLICITBIAS_TRACEBACK=1`` to see its traceback (0 or empty: off).  ``verify`` exits 1 when a
claim disagrees.  SIGTERM interrupts a command as SIGINT does; either is one line saying what was
kept (``Store.map``'s counts), exit status 130 or 143.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import os
import pkgutil
import signal
import sqlite3
import sys
import threading

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
        with _signals_interrupt():
            if args.store is not None and not args.store.strip():
                raise ParameterError("store must be the path of an SQLite file (created if missing), got ''")
            status = args.func(args)
    except KeyboardInterrupt as exc:
        print(f"{where}: {interrupted_line(exc)}", file=sys.stderr)
        return 128 + _signal_of(exc)
    except Exception as exc:
        traceback = os.environ.get("IMPLICITBIAS_TRACEBACK", "").strip() not in ("", "0")
        if traceback and not isinstance(exc, ParameterError):
            raise
        print(f"{where}: {error_line(exc)}", file=sys.stderr)
        return 2
    return int(status or 0)


class _Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread like SIGINT's KeyboardInterrupt, so both end a run the same way."""


@contextlib.contextmanager
def _signals_interrupt():
    """While a command runs, SIGTERM interrupts it as SIGINT does (``KeyboardInterrupt``), so that a
    sweep stopped by an operator or a batch system stores what finished and says so; SIGINT and
    SIGTERM arriving while it winds down are ignored (the first one decides)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def terminate(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise _Terminated()

    def interrupt(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise KeyboardInterrupt()

    old = {s: signal.signal(s, h) for s, h in ((signal.SIGTERM, terminate), (signal.SIGINT, interrupt))}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _chain(exc: BaseException) -> list[BaseException]:
    out = [exc]
    while out[-1].__cause__ or out[-1].__context__:
        out.append(out[-1].__cause__ or out[-1].__context__)
    return out


def _signal_of(exc: KeyboardInterrupt) -> int:
    """SIGTERM when a ``_Terminated`` started the interrupt, else SIGINT."""
    return signal.SIGTERM if any(isinstance(e, _Terminated) for e in _chain(exc)) else signal.SIGINT


def interrupted_line(exc: KeyboardInterrupt) -> str:
    """The one line that says what an interrupted command kept."""
    from implicitbias.store import Interrupted

    name = signal.Signals(_signal_of(exc)).name
    found = next((e for e in _chain(exc) if isinstance(e, Interrupted)), None)
    if found is not None:
        return (f"interrupted by {name}: {found.stored} of {found.stored + found.left} {found.kind} records are in "
                f"the store; the {found.left} unfinished are resumed by a rerun")
    return f"interrupted by {name}; completed work is in the store, rerun to resume"


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
