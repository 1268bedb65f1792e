"""Cost of the checks ``Store`` runs on every open, on a realistic store: 10,000 sweep-run records
(a 40-epoch history of ten numbers each) plus 100,000 per-epoch rows, about 170 MB.

Prints one table: a bare SQLite open, ``PRAGMA quick_check`` (run on every open),
``PRAGMA integrity_check`` (not run: see ``Store._check_contents``) and the whole ``Store()`` open,
best of 3 with the file in the page cache.

Run:  python benchmarks/bench_store_open.py [PATH, default: a temporary file]
"""

from __future__ import annotations

import random
import sqlite3
import sys
import tempfile
import time
from pathlib import Path

from implicitbias.figures import markdown_table
from implicitbias.store import Store

KEYS = ("train_loss", "val_loss", "test_acc", "kernel_norm", "head_norm", "bn_norm", "lr", "seconds", "train_acc", "val_acc")


def build(path: Path, n: int = 10_000, epochs: int = 40) -> None:
    rng = random.Random(0)
    with Store(path) as s:
        s._db.execute("BEGIN")
        for i in range(n):
            config = {"sigma_w": rng.random(), "seed": i, "lr": 0.1, "dataset": "digits", "epochs": epochs}
            history = [{"epoch": e, **{k: rng.random() for k in KEYS}} for e in range(epochs)]
            s.put("validation.run", config, {"history": history, "status": "done"}, code="bench")
            for e in range(0, epochs, 4):
                s.put_epoch("validation.run", config, e, history[e])
        s._db.execute("COMMIT")


def best(fn, repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def pragma(path: Path, name: str):
    def run():
        db = sqlite3.connect(path)
        assert db.execute(f"PRAGMA {name}").fetchone()[0] == "ok"
        db.close()

    return run


def bare(path: Path):
    def run():
        db = sqlite3.connect(path)
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
        db.close()

    return run


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(tmp) / "store.sqlite"
        if not path.exists():
            build(path)
        rows = [
            ["bare sqlite3 open", f"{best(bare(path)) * 1e3:.1f}"],
            ["PRAGMA quick_check", f"{best(pragma(path, 'quick_check')) * 1e3:.1f}"],
            ["PRAGMA integrity_check", f"{best(pragma(path, 'integrity_check')) * 1e3:.1f}"],
            ["Store() open (checks included)", f"{best(lambda: Store(path).close()) * 1e3:.1f}"],
        ]
        print(f"store: {path.stat().st_size / 1e6:.0f} MB")
        print(markdown_table(["step", "ms"], rows))


if __name__ == "__main__":
    main()
