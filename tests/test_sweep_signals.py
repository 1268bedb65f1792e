"""Ctrl-C and SIGTERM keep finished work: a ``--executor process`` sweep sent a real signal stops
handing out runs at once, stores every run that finished, leaves the unfinished ones to a rerun
(which sees them as interrupted), says so in one line with exit status 130 (SIGINT) or 143
(SIGTERM), prints no warning (no leaked semaphore) and leaves no worker behind.  The SIGTERM case
and the same Ctrl-C to a Dask LocalCluster sweep are in the slow tier (each case starts two torch
workers, about 12 s on 2 cores)."""

import os
import re
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from test_orphans import _alive, _children

SPEC = """
name = "signals"
[base]
dataset = "synthetic"
data_size = 200
width = 0.0625
epochs = 4
batch_size = 16
sigma_w = [0.5, 1.0, 2.0, 3.0]
optimizer = "sgd"
lr = [0.05, 0.1, 0.2]
[options]
threads = 1
"""
RUNS, WORKERS = 12, 2


def _done(path):
    if not path.exists():
        return 0
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute("SELECT COUNT(*) FROM records WHERE status='done'").fetchone()[0]
    except sqlite3.OperationalError:  # the schema is not there yet
        return 0
    finally:
        db.close()


def _sweep(tmp_path, *extra):
    cmd = [sys.executable, "-m", "implicitbias", "--store", str(tmp_path / "store.sqlite"), "sweep",
           str(tmp_path / "spec.toml"), "--no-progress", *extra]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "default"})


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(("signum", "group", "executor"), [
    (signal.SIGINT, True, "process"),
    pytest.param(signal.SIGTERM, False, "process", marks=pytest.mark.slow),
    pytest.param(signal.SIGINT, True, "dask", marks=pytest.mark.slow),
], ids=["SIGINT to the process group (Ctrl-C)", "SIGTERM to the client", "Ctrl-C, Dask LocalCluster"])
def test_a_signal_stores_what_finished_and_leaves_the_rest_resumable(tmp_path, signum, group, executor):
    (tmp_path / "spec.toml").write_text(SPEC)
    store = tmp_path / "store.sqlite"
    proc = _sweep(tmp_path, "--executor", executor, "--workers", str(WORKERS))
    deadline = time.monotonic() + 300
    while _done(store) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.05)
    workers = _children(proc.pid)
    os.killpg(proc.pid, signal.SIGSTOP)  # frozen: nothing finishes between the count and the signal
    at_signal = _done(store)
    (os.killpg if group else os.kill)(proc.pid, signum)
    os.killpg(proc.pid, signal.SIGCONT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signum, err
    lines = [line for line in err.split("\n") if line.strip()]
    assert len(lines) == 1, err  # one line: no traceback, no "leaked semaphore" or any other warning
    done = _done(store)
    name = signal.Signals(signum).name
    assert f"interrupted by {name}: {done} of {RUNS} validation.run records are in the store" in lines[0], lines[0]
    assert f"the {RUNS - done} unfinished are resumed by a rerun" in lines[0]
    assert 2 <= at_signal <= done <= at_signal + WORKERS  # only runs in progress at the signal finished after it
    assert done < RUNS, "the sweep must be interrupted mid-way"
    t0 = time.monotonic()
    while any(_alive(p) for p in workers) and time.monotonic() - t0 < 10:
        time.sleep(0.05)
    assert not [p for p in workers if _alive(p)], "workers outlived the interrupted client"
    status = _sweep(tmp_path, "--dry-run")
    out, err = status.communicate(timeout=120)
    assert status.returncode == 0, err
    found = re.search(r"(\d+) done, (\d+) interrupted \(rerun\), (\d+) to run", out)
    assert found and int(found[1]) == done and int(found[2]) + int(found[3]) == RUNS - done, out
