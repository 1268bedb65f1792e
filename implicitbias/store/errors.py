"""The store's errors, one line each: a file that cannot be used, a cell that failed, a sweep interrupted.

``StoreError`` is a ``ParameterError``, so the command line prints it and exits with status 2;
``UNTOUCHED`` ends every refusal of a file the store did not write to.
"""

from __future__ import annotations

from implicitbias.theory.params import ParameterError

__all__ = ["StoreError", "CellError", "Interrupted", "UNTOUCHED"]

UNTOUCHED = "it was left untouched; pass --store a new path (or restore the file from a copy)"


class StoreError(ParameterError):
    """A store file that cannot be used as asked: one line naming the file, what is wrong and
    what to do.  A ``ParameterError``, so the command line prints it and exits with status 2."""


class CellError(RuntimeError):
    """A cell of ``Store.map`` raised; it is recorded as ``failed`` with the message."""


class Interrupted(KeyboardInterrupt):
    """``Store.map`` stopped by an interrupt (SIGINT, or SIGTERM turned into one by the command
    line): how many of its cells are in the store and how many are left to a rerun."""

    def __init__(self, kind: str, stored: int, left: int):
        super().__init__(f"{kind}: {stored} stored, {left} left to a rerun")
        self.kind, self.stored, self.left = kind, stored, left
