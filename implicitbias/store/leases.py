"""Leases: no cell computed twice at once, and none left waiting on a holder that is gone.

A ``running`` row names its owner (``host|pid|process start|token``: the token tells two stores
of one process apart) and a heartbeat time that a background thread renews every
``lease_seconds / 4`` while a sweep runs (``leasing``).  A cell is computed only after its lease is
taken (``claim``), so two processes running the same sweep on one store compute each cell once:
each takes the cells nobody holds, then waits for the cells the other holds and reads their
records.  A lease is dead, and its cell is taken over, when its heartbeat is older than
``lease_seconds`` (a holder on another host that was killed or lost), at once when its holder is
a process of this host that no longer exists (a SIGKILLed sweep is resumed without waiting, the
process start time telling a reused pid apart), and when its holder closed its store (``CLOSED``;
a ``Store`` releases its leases on ``close``).
"""

from __future__ import annotations

import contextlib
import os
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Mapping
from pathlib import Path

from implicitbias.store.records import canonical_json, config_key, intact

__all__ = ["CLOSED", "owner_tag", "alive", "claim", "release", "leasing"]

CLOSED: set[str] = set()  # owner tags of the stores this process closed: their leases are over


def _process_start(pid: int) -> str:
    """The start time of process ``pid`` (clock ticks since boot, from /proc), "" when it does
    not exist; with /proc missing (not Linux), "?" while the pid exists.  With the pid it
    identifies a process: a reused pid has another start time."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[19].decode()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return ""
    except (OSError, IndexError):
        return ""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return ""
    except PermissionError:
        pass
    return "?"


def owner_tag() -> str:
    """``host|pid|process start|token``: who holds a lease (the token tells two stores of one process apart)."""
    pid = os.getpid()
    return f"{socket.gethostname()}|{pid}|{_process_start(pid)}|{uuid.uuid4().hex[:8]}"


def alive(owner: str | None, heartbeat: float | None, now: float, *, holder: str, lease_seconds: float) -> bool:
    """Whether a lease still holds against ``holder`` (the owner tag asking): it has an owner other
    than ``holder`` and not closed, a heartbeat younger than ``lease_seconds``, and (on this host)
    its process still exists."""
    if (owner is None or owner == holder or owner in CLOSED or heartbeat is None
            or now - heartbeat > lease_seconds):
        return False
    host, pid, started, _ = (owner.split("|") + ["", "", "", ""])[:4]
    if host != socket.gethostname() or not pid.isdigit():
        return True
    return _process_start(int(pid)) == started and started != ""


def claim(db: sqlite3.Connection, kind: str, config: Mapping, *, code: str, holder: str, lease_seconds: float) -> str:
    """Take the lease on ``(kind, config)`` for ``holder``: ``claimed`` (marked ``running`` under
    ``code``; epoch rows left by other code are cleared), ``done`` (a record of this code is stored)
    or ``leased`` (a live holder is computing it)."""
    key = config_key(kind, config)
    query = "SELECT status, code, owner, heartbeat, key, config, record, digest FROM records WHERE key=?"

    def held(row, now) -> str | None:
        if row is not None and row[0] == "done" and row[1] == code and intact(kind, *row[4:]) is not None:
            return "done"
        if row is not None and row[0] == "running" and alive(row[2], row[3], now, holder=holder,
                                                              lease_seconds=lease_seconds):
            return "leased"
        return None

    # a read first: a process waiting on many cells held by others takes no write lock
    state = held(db.execute(query, (key,)).fetchone(), time.time())
    if state is not None:
        return state
    now = time.time()
    db.execute("BEGIN IMMEDIATE")
    try:
        row = db.execute(query, (key,)).fetchone()
        state = held(row, now)
        if state is None:
            state = "claimed"
            if row is not None and row[1] != code:
                db.execute("DELETE FROM epochs WHERE key=?", (key,))
            db.execute(
                "INSERT INTO records(key, kind, config, status, started, code, owner, heartbeat) "
                "VALUES (?,?,?,'running',?,?,?,?) ON CONFLICT(key) DO UPDATE SET status='running', record=NULL, "
                "started=excluded.started, code=excluded.code, owner=excluded.owner, heartbeat=excluded.heartbeat",
                (key, kind, canonical_json(config), now, code, holder, now),
            )
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    return state


def release(db: sqlite3.Connection, holder: str) -> None:
    """End ``holder``'s leases on the cells it has not finished (they stay ``running``: partial records
    a rerun resumes)."""
    db.execute("UPDATE records SET owner=NULL WHERE owner=? AND status='running'", (holder,))


@contextlib.contextmanager
def leasing(db: sqlite3.Connection, path: Path, holder: str, lease_seconds: float):
    """While the block runs, renew ``holder``'s leases every ``lease_seconds / 4`` from a thread with
    its own connection (the main thread may be busy computing a cell for minutes); when it ends,
    however it ends, release those still unfinished on ``db``."""
    stop = threading.Event()

    def beat() -> None:
        beats = sqlite3.connect(path, timeout=60, isolation_level=None)
        try:
            while not stop.wait(lease_seconds / 4):
                with contextlib.suppress(sqlite3.OperationalError):  # busy: the next beat renews
                    beats.execute("UPDATE records SET heartbeat=? WHERE owner=? AND status='running'",
                                  (time.time(), holder))
        finally:
            beats.close()

    thread = threading.Thread(target=beat, name="store-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        release(db, holder)
