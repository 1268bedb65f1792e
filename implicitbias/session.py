"""The session store: a results store that lives as long as the Python process.

``implicitbias.claims.Context(store=None)`` and every function of ``implicitbias.api`` called
without a store use it, so a notebook computes, caches and reuses results without choosing a
file; nothing is written outside a temporary folder, which is deleted when the interpreter
exits.  Pass a path (or an open ``implicitbias.store.Store``) to keep results across sessions.

SQLite is the store's engine (leases, fingerprints and resumption are ``Store``'s); the session
store is an ordinary ``Store`` on a file in a temporary folder rather than SQLite's ``:memory:``
database, because worker processes of an executor must be able to open it too.
"""

from __future__ import annotations

import atexit
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from implicitbias.store import Store

__all__ = ["session_store"]

_SESSION: list[Store] = []  # at most one Store; a list so that no ``global`` statement is needed


def _close() -> None:
    for store in _SESSION:
        store.close()
        shutil.rmtree(Path(store.path).parent, ignore_errors=True)
    _SESSION.clear()


def session_store() -> Store:
    """The process's temporary store, created on first use and deleted when the interpreter exits.

    Returns
    -------
    Store
        The same open :class:`~implicitbias.store.Store` at every call of this process.

    See Also
    --------
    implicitbias.open_store : the store a call uses, this one for ``store=None``.

    Examples
    --------
    >>> from implicitbias.session import session_store
    >>> session_store() is session_store()
    True
    """
    from implicitbias.store import Store

    if not _SESSION:
        folder = Path(tempfile.mkdtemp(prefix="implicitbias-session-"))
        _SESSION.append(Store(folder / "session.sqlite"))
        atexit.register(_close)
    return _SESSION[0]
