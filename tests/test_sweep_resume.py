"""A sweep killed with SIGKILL mid-run resumes with exactly the expected completed records:
nothing finished is lost or recomputed, the interrupted run is recognised as partial."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

from implicitbias.store import Store
from implicitbias.validation.run import KIND, execute
from implicitbias.validation.sweep import load_spec, sweep_status

SPEC = """
name = "resume"
[base]
dataset = "synthetic"
data_size = 200
width = 0.0625
epochs = 3
batch_size = 16
sigma_w = [0.5, 1.0, 2.0]
optimizer = "sgd"
lr = [0.05, 0.1]
[options]
threads = 1
"""


def _query(path, sql):
    if not path.exists():
        return []
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30)
    try:
        return db.execute(sql).fetchall()
    except sqlite3.OperationalError:  # the schema is not there yet
        return []
    finally:
        db.close()


def _done_rows(path):
    return dict(_query(path, "SELECT key, finished FROM records WHERE status='done'"))


def _mid_run(path):
    """At least two runs finished and the current one has stored an epoch row."""
    started = _query(path, "SELECT COUNT(*) FROM records r JOIN epochs e ON r.key = e.key WHERE r.status='running'")
    return len(_done_rows(path)) >= 2 and bool(started) and started[0][0] > 0


def _sweep(spec_path, store_path):
    cmd = [sys.executable, "-m", "implicitbias", "--store", str(store_path), "sweep", str(spec_path), "--no-progress"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "OMP_NUM_THREADS": "1"})


def test_sigkill_then_resume(tmp_path):
    spec_path = tmp_path / "resume.toml"
    spec_path.write_text(SPEC)
    store_path = tmp_path / "store.sqlite"
    spec = load_spec(spec_path)
    assert len(spec.runs) == 6

    proc = _sweep(spec_path, store_path)
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        if _mid_run(store_path):
            proc.send_signal(signal.SIGSTOP)  # frozen: the state just seen cannot move on before the kill
            if _mid_run(store_path):
                break
            proc.send_signal(signal.SIGCONT)
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    before = _done_rows(store_path)
    assert 2 <= len(before) < 6, "the sweep must be killed mid-way"

    with Store(store_path) as store:
        status = sweep_status(spec, store)
        assert status["done"] == len(before)
        assert status["partial"] == 1 and sum(status.values()) == 6
        # the interrupted run is recognised: status running, with its first epoch rows
        (partial,) = [c for c in spec.configs if store.status(KIND, c, code=store.code_of(execute)) == "running"]
        assert len(store.epochs(KIND, partial)) >= 1

    proc = _sweep(spec_path, store_path)
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err.decode()
    assert f"{len(before)} done" in out.decode()
    after = _done_rows(store_path)
    with Store(store_path) as store:
        assert sweep_status(spec, store) == {"done": 6, "partial": 0, "missing": 0}
        assert store.counts(KIND) == {"done": 6}
        expected = {store.get(KIND, c, code=store.code_of(execute)) is not None for c in spec.configs}
    assert expected == {True} and len(after) == 6
    # nothing completed before the kill was computed again
    assert {k: after[k] for k in before} == before
