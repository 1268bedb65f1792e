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
import re
import signal
import sqlite3
import sys
import threading

from implicitbias import __version__, commands
from implicitbias.executors import EXECUTORS
from implicitbias.theory.params import ParameterError

__all__ = ["main", "build_parser"]


class _Help(argparse.HelpFormatter):
    """Help that shows every option's default (argparse's ArgumentDefaultsHelpFormatter, except that
    switches and options whose help already says their default are left as written)."""

    def _get_help_string(self, action):
        text = action.help or ""
        if ("(default" in text or action.default is argparse.SUPPRESS or action.nargs == 0
                or not action.option_strings):
            return text
        return f"{text} (default: %(default)s)"


class _Parser(argparse.ArgumentParser):
    """argparse, but an error is a single line (no usage dump) with exit status 2."""

    def __init__(self, *args, formatter_class=_Help, **kwargs):
        super().__init__(*args, formatter_class=formatter_class, **kwargs)

    def error(self, message: str):
        self.exit(2, f"{self.prog}: error: {message}\n")


# Options of every command, accepted before or after it (``implicitbias --store s.sqlite phase`` and
# ``implicitbias phase --store s.sqlite`` are the same).  The top parser holds their defaults; each
# command's parser has them with ``argparse.SUPPRESS`` defaults, so a command parser only sets what
# was typed after the command and never overwrites what was typed before it.
GLOBAL_FLAGS_WITH_VALUE = ("--store", "--executor", "--workers")


def add_global_options(parser: argparse.ArgumentParser, *, top: bool, executor: str = "the command's, see its --help") -> None:
    """The global options on ``parser``: with their defaults (``top``) or suppressed; ``executor`` is
    the command's default executor, named in its help."""
    def default(value):
        return value if top else argparse.SUPPRESS

    group = parser.add_argument_group("global options (before or after the command)")
    group.add_argument("--store", metavar="PATH", default=default(None),
                       help="SQLite results store (default: $IMPLICITBIAS_STORE or ~/.cache/implicitbias/store.sqlite)")
    group.add_argument("--executor", choices=EXECUTORS, default=default(None),
                       help=f"where cells and runs execute: {', '.join(EXECUTORS)} (default: {executor})")
    group.add_argument("--workers", type=int, metavar="N", default=default(None),
                       help="workers of a process, dask or slurm executor (default: one per GPU, else per CPU)")
    group.add_argument("--progress", action=argparse.BooleanOptionalAction, default=default(None),
                       help="progress bars on stderr (default: only when stderr is a terminal and not --json)")
    group.add_argument("--json", action="store_true", default=default(False),
                       help="print the results as one JSON document instead of Markdown (default: off)")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv``, only the command it names is registered (when it names one)."""
    parser = _Parser(
        prog="implicitbias",
        description="Executable checks of the implicit bias of depth and of forgetting clocks.",
    )
    parser.add_argument("--version", action="version", version=f"implicitbias {__version__}")
    add_global_options(parser, top=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    names = sorted(m.name for m in pkgutil.iter_modules(commands.__path__))
    command = _command_of(argv or [])
    for name in [command] if command in names else names:
        importlib.import_module(f"{commands.__name__}.{name}").register(sub)
    for child in sub.choices.values():
        _add_globals_below(child)
    return parser


def _add_globals_below(parser: argparse.ArgumentParser) -> None:
    """Global options (suppressed defaults) on a command's parser and on every parser under it, and
    the map from parameter names to the flags that set them (``_flags``) as the parser's default."""
    add_global_options(parser, top=False, executor=parser.get_default("default_executor") or "inline")
    parser.set_defaults(parameter_flags=_flags(parser))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in action.choices.values():
                _add_globals_below(child)


def _flags(parser: argparse.ArgumentParser) -> dict[str, tuple[str, ...]]:
    """Every name a parameter of ``parser`` may carry in a ParameterError (its dest, the dest with
    dashes, its flags without dashes) -> the flags that set it, the documented one first."""
    found: dict[str, tuple[str, ...]] = {}
    by_dest: dict[str, list[str]] = {}
    for action in parser._actions:
        if action.option_strings and not isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            by_dest.setdefault(action.dest, []).extend(s for s in action.option_strings if s.startswith("--"))
    for dest, strings in by_dest.items():
        for name in (dest, dest.replace("_", "-"), *(s.lstrip("-") for s in strings)):
            found.setdefault(name, tuple(strings))
    return found


def _command_of(argv: list[str]) -> str | None:
    """The first positional argument (the command), skipping the global options' values."""
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg in GLOBAL_FLAGS_WITH_VALUE:
            skip = True
        elif not arg.startswith("-"):
            return arg
    return None


def flag_typed(flags: tuple[str, ...], argv: list[str]) -> str:
    """Of the flags that set one parameter (its name and deprecated spellings), the one the user typed, else the first."""
    return next((f for f in flags if any(a == f or a.startswith(f + "=") for a in argv)), flags[0])


def name_flags(text: str, flags: dict[str, tuple[str, ...]], argv: list[str]) -> str:
    """``text`` of a ParameterError with its leading parameter name (``batch_size must ...``) written
    as the flag the user typed (``--batch-size must ...``); the one place where names become flags."""
    match = re.match(r"([A-Za-z][\w-]*)(?=[\s:])", text)
    if match is None or match.group(1) not in flags:
        return text
    return flag_typed(flags[match.group(1)], argv) + text[match.end():]


def _resolve(args: argparse.Namespace) -> None:
    """The global options' values that depend on the command or the terminal, checked: the
    command's default executor, and progress bars only on a terminal (and not with --json) unless
    asked; the one place where progress is decided (``Store.map`` shows tqdm bars when told)."""
    from implicitbias.executors import check_executor

    if args.store is not None and not args.store.strip():
        raise ParameterError("store must be the path of an SQLite file (created if missing), got ''")
    if args.executor is None:
        args.executor = getattr(args, "default_executor", None) or "inline"
    check_executor(args.executor, args.workers)
    if args.progress is None:  # JSON is read by programs: no progress lines unless asked
        args.progress = sys.stderr.isatty() and not args.json
    for line in getattr(args, "deprecated", ()):
        print(f"implicitbias: warning: {line}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a one-line argparse error
        return exc.code if isinstance(exc.code, int) else 2
    if args.command is None:  # a bare ``implicitbias``: the commands and the global options
        parser.print_help()
        return 0
    where = f"implicitbias {args.command}"
    try:
        with _signals_interrupt():
            _resolve(args)
            status = args.func(args)
    except KeyboardInterrupt as exc:
        print(f"{where}: {interrupted_line(exc)}", file=sys.stderr)
        return 128 + _signal_of(exc)
    except Exception as exc:
        traceback = os.environ.get("IMPLICITBIAS_TRACEBACK", "").strip() not in ("", "0")
        if traceback and not isinstance(exc, ParameterError):
            raise
        print(f"{where}: {error_line(exc, getattr(args, 'parameter_flags', {}), argv)}", file=sys.stderr)
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


def error_line(exc: BaseException, flags: dict[str, tuple[str, ...]] | None = None, argv: list[str] = ()) -> str:
    """The one line (``error: ...``) that stands for ``exc`` on the command line; ``flags``: the
    command's parameter names and their flags (``_flags``), so a ParameterError names the flag typed
    in ``argv``."""
    from implicitbias.store import CellError

    if isinstance(exc, ParameterError):
        text = name_flags(str(exc), flags or {}, list(argv))
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
