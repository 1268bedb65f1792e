"""The map scheduler: ``Store.map``'s steps, so that a sweep killed at any point resumes where it
stopped with nothing completed lost or repeated.

One call is a ``Sweep``: its cells (configs), the code fingerprint of each, their records (those
already stored, of the same code, are served as they are) and a progress bar.  Each missing cell
is leased (``leases.claim``), handed to the executor (or computed in this process) and stored by
this process the moment it completes (``Sweep.finish``: one committed transaction a cell; workers
return records, only the client process writes).  Cells leased by another live process are
waited for and read when done, or taken over when the lease dies (``run``).  An interrupt stops
handing out cells at once, stores what has finished or arrives within ``DRAIN_S`` and releases
the rest (``Sweep.drain``).
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import (
    FIRST_COMPLETED,
    BrokenExecutor,
    CancelledError,
    Executor,
    Future,
    ProcessPoolExecutor,
    as_completed,
    wait,
)
from typing import TYPE_CHECKING

from implicitbias.fingerprint import code_fingerprint
from implicitbias.store.errors import CellError, Interrupted
from implicitbias.store.records import canonical_json
from implicitbias.theory.params import ParameterError

if TYPE_CHECKING:
    from implicitbias.store.facade import Store

__all__ = ["DRAIN_S", "Sweep", "map_records"]

DRAIN_S = 0.5  # on an interrupt, how long results already on their way from workers are awaited


class Sweep:
    """One call of ``Store.map``: the cells, the code of each, their records (``None`` while missing)."""

    def __init__(self, store: Store, kind: str, fn: Callable[[dict], Mapping], configs: Iterable[Mapping],
                 executor: Executor | None, code: str | Callable[[Mapping], str] | None):
        self.store, self.kind, self.fn, self.executor = store, kind, fn, executor
        self.configs = [dict(c) for c in configs]
        fixed = None if callable(code) else code or code_fingerprint(fn)
        self.codes = [code(c) if callable(code) else fixed for c in self.configs]
        self.results: list[dict | None] = [store.get(kind, c, code=k)
                                           for c, k in zip(self.configs, self.codes, strict=True)]
        # a process pool starts whatever it is handed as soon as a worker frees, beyond the reach of
        # cancel (its call queue): it is handed one cell per worker, so that an interrupt stops at once
        self.slots = executor._max_workers if isinstance(executor, ProcessPoolExecutor) else None
        self.bar = None  # the progress bar, once ``map_records`` knows the store may be written

    def missing(self) -> list[int]:
        """The cells without a record yet."""
        return [i for i, r in enumerate(self.results) if r is None]

    def finish(self, i: int, compute: Callable[[], Mapping]) -> None:
        """Store cell ``i``'s record from ``compute()``; a cell that raises is stored as ``failed`` and
        raised (one whose executor ended under it is left unfinished)."""
        try:
            record = compute()
        except (BrokenExecutor, CancelledError) as exc:  # the pool ended under the cell: unfinished, not failed
            raise CellError(f"{self.kind} cell {canonical_json(self.configs[i])[:200]} was not finished "
                            f"({_one_line(exc)}); a rerun computes it") from exc
        except Exception as exc:
            self.store.put(self.kind, self.configs[i], {"error": _one_line(exc)}, code=self.codes[i], status="failed")
            if isinstance(exc, ParameterError):
                raise
            raise CellError(f"{self.kind} cell {canonical_json(self.configs[i])[:200]} failed: "
                            f"{_one_line(exc)}") from exc
        self.results[i] = json.loads(canonical_json(record))
        self.store.put(self.kind, self.configs[i], self.results[i], code=self.codes[i])
        self.bar.update()

    def run(self, indices: list[int]) -> list[int]:
        """Compute the given cells this process can lease; return those others hold."""
        held: list[int] = []
        pending: dict[Future, int] = {}
        try:
            for i in indices:
                self.take(i, held, pending)
            for fut in as_completed(list(pending)):
                self.finish(pending.pop(fut), fut.result)
        except KeyboardInterrupt:
            self.drain(pending)
            raise
        finally:
            for fut in pending:
                fut.cancel()
        return held

    def take(self, i: int, held: list[int], pending: dict[Future, int]) -> None:
        """Lease cell ``i`` and compute it (in this process, or handed to the executor into ``pending``);
        a cell another process holds goes to ``held``, one it has finished is read."""
        state = self.store.claim(self.kind, self.configs[i], code=self.codes[i])
        if state == "leased":
            held.append(i)
        elif state == "done":
            self.results[i] = self.store.get(self.kind, self.configs[i], code=self.codes[i])
            self.bar.update()
        elif self.executor is None:
            self.finish(i, functools.partial(self.fn, self.configs[i]))
        else:
            pending[self.executor.submit(self.fn, self.configs[i])] = i
            while True:  # store what has finished; a process pool gets a cell only for a free worker
                for fut in [f for f in pending if f.done()]:
                    self.finish(pending.pop(fut), fut.result)
                if self.slots is None or len(pending) < self.slots:
                    break
                wait(list(pending), return_when=FIRST_COMPLETED)

    def drain(self, pending: dict[Future, int]) -> None:
        """On an interrupt: stop handing out cells, and store those that finished (or whose results
        are on their way, within ``DRAIN_S``)."""
        for fut in pending:
            fut.cancel()
        for fut in wait(list(pending), timeout=DRAIN_S).done:
            if not fut.cancelled() and fut.exception() is None:
                self.finish(pending.pop(fut), fut.result)


def map_records(store: Store, kind: str, fn: Callable[[dict], Mapping],
                configs: Sequence[Mapping] | Iterable[Mapping], *, executor: Executor | None, progress: bool,
                desc: str | None, code: str | Callable[[Mapping], str] | None) -> list[dict]:
    """``Store.map`` (its docstring says what it promises): lease, compute and store the missing cells
    under a heartbeat, wait for those others hold, and return every record in order."""
    from tqdm.auto import tqdm

    sweep = Sweep(store, kind, fn, configs, executor, code)
    todo = sweep.missing()
    if todo:
        store.require_writable(f"computing {len(todo)} missing {kind} records")
    total = len(sweep.configs)
    sweep.bar = tqdm(total=total, initial=total - len(todo), desc=desc or kind, disable=not progress or not todo,
                     leave=False)
    try:
        with store._leasing() if todo else contextlib.nullcontext():
            waiting = sweep.run(todo)
            while waiting:  # cells another process computes: read them when done, take them over if it dies
                time.sleep(min(1.0, store.lease_seconds / 10))
                waiting = sweep.run(waiting)
    except KeyboardInterrupt as exc:
        left = len(sweep.missing())
        raise Interrupted(kind, total - left, left) from exc
    finally:
        sweep.bar.close()
    return sweep.results  # type: ignore[return-value]


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or "(no message)"
    return f"{type(exc).__name__}: {text[:500]}"
