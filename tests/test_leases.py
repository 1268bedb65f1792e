"""Work leases in the store: a cell being computed by one process is not started by another; a
dead holder's cell is taken over (at once when the holder was a process of this host, after the
lease expires otherwise); a cell that raises is recorded as failed with its message."""

import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from implicitbias.executors import open_executor
from implicitbias.store import CellError, Store

TESTS = Path(__file__).parent


def _logged_cell(config):
    """A cell that notes who computed it (one appended line per computation) and takes a while."""
    with open(config["log"], "a") as fh:
        fh.write(f"{config['x']} {os.getpid()}\n")
    time.sleep(config["seconds"])
    return {"square": config["x"] ** 2}


def _map_in_subprocess(store_path, log, go, n, seconds):
    """Run in a fresh interpreter: wait for ``go`` to exist, then map the logged cells."""
    code = (
        "import json, sys, time, os\n"
        f"sys.path.insert(0, {str(TESTS)!r})\n"
        "from test_leases import _logged_cell\n"
        "from implicitbias.store import Store\n"
        f"while not os.path.exists({str(go)!r}): time.sleep(0.01)\n"
        f"with Store({str(store_path)!r}) as s:\n"
        f"    recs = s.map('logged', _logged_cell, [{{'x': i, 'log': {str(log)!r}, 'seconds': {seconds}}} for i in range({n})], progress=False)\n"
        "print(json.dumps(recs))\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_two_processes_on_one_store_compute_each_cell_once(tmp_path):
    store, log, go, n = tmp_path / "s.sqlite", tmp_path / "log.txt", tmp_path / "go", 12
    Store(store).close()
    procs = [_map_in_subprocess(store, log, go, n, 0.25) for _ in range(2)]
    time.sleep(1.0)  # both interpreters started and waiting
    go.touch()
    outs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    records = [json.loads(o) for o, _ in outs]
    assert records[0] == records[1] == [{"square": i * i} for i in range(n)]
    lines = [line.split() for line in log.read_text().splitlines()]
    computed = sorted(int(x) for x, _ in lines)
    assert computed == list(range(n)), f"cells computed more than once or never: {computed}"
    by_pid = {pid: sum(p == pid for _, p in lines) for pid in {p for _, p in lines}}
    assert len(by_pid) == 2, f"the work was not shared: {by_pid}"  # both processes took cells


def _cell(config):
    return {"square": config["x"] ** 2}


CODE = Store.code_of(_cell)


def _hold(path, key_config, owner, heartbeat):
    """Mark a cell running under a foreign owner with the given heartbeat (a holder elsewhere)."""
    with Store(path) as s:
        s.claim("c", key_config, code=CODE)
        s._db.execute("UPDATE records SET owner=?, heartbeat=? WHERE kind='c'", (owner, heartbeat))


def test_live_lease_on_another_host_is_respected_until_it_expires(tmp_path):
    path = tmp_path / "s.sqlite"
    _hold(path, {"x": 3}, "elsewhere|123|456|tok", time.time())
    with Store(path, lease_seconds=30) as s:
        assert s.claim("c", {"x": 3}, code=CODE) == "leased"
    with Store(path, lease_seconds=30) as s:  # the same lease, its heartbeat now 40 s old
        s._db.execute("UPDATE records SET heartbeat=heartbeat-40")
        assert s.claim("c", {"x": 3}, code=CODE) == "claimed"


def test_map_waits_for_an_expiring_lease_then_takes_the_cell_over(tmp_path):
    path = tmp_path / "s.sqlite"
    _hold(path, {"x": 3}, "elsewhere|123|456|tok", time.time())  # a holder killed on another host
    calls = []
    with Store(path, lease_seconds=1.0) as s:
        t0 = time.monotonic()
        recs = s.map("c", lambda c: calls.append(c) or _cell(c), [{"x": 2}, {"x": 3}], progress=False, code=CODE)
        waited = time.monotonic() - t0
    assert recs == [{"square": 4}, {"square": 9}] and calls == [{"x": 2}, {"x": 3}]
    assert waited >= 0.5, "the cell was taken before its lease expired"


def test_lease_of_a_dead_process_on_this_host_is_taken_over_at_once(tmp_path):
    path = tmp_path / "s.sqlite"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    _hold(path, {"x": 3}, f"{socket.gethostname()}|{dead.stdout.strip()}|1|tok", time.time())
    with Store(path, lease_seconds=3600) as s:
        assert s.claim("c", {"x": 3}, code=CODE) == "claimed"


def test_a_waiting_process_reads_the_record_the_holder_stores(tmp_path):
    path = tmp_path / "s.sqlite"
    holder = Store(path)  # another holder in this process: a live lease
    assert holder.claim("c", {"x": 5}, code=CODE) == "claimed"
    threading.Timer(0.5, lambda: Store(path).put("c", {"x": 5}, {"square": 25, "by": "holder"}, code=CODE)).start()
    calls = []
    with Store(path, lease_seconds=60) as s:
        (rec,) = s.map("c", lambda c: calls.append(c) or _cell(c), [{"x": 5}], progress=False, code=CODE)
    assert rec == {"square": 25, "by": "holder"} and calls == []
    holder.close()


def test_heartbeat_keeps_a_long_cell_leased(tmp_path):
    """A cell running for many lease lifetimes stays leased: the holder's heartbeat renews it."""
    path, log = tmp_path / "s.sqlite", tmp_path / "log.txt"
    code = (
        f"import sys; sys.path.insert(0, {str(TESTS)!r})\n"
        "from test_leases import _logged_cell\n"
        "from implicitbias.store import Store\n"
        f"with Store({str(path)!r}, lease_seconds=0.3) as s:\n"
        f"    s.map('logged', _logged_cell, [{{'x': 1, 'log': {str(log)!r}, 'seconds': 3.0}}], progress=False)\n"
    )
    holder = subprocess.Popen([sys.executable, "-c", code])
    deadline = time.monotonic() + 60
    while not log.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    config = {"x": 1, "log": str(log), "seconds": 3.0}
    cell_code = Store.code_of(_logged_cell)
    time.sleep(1.5)  # five lease lifetimes into the cell
    with Store(path, lease_seconds=0.3) as other:
        assert other.claim("logged", config, code=cell_code) == "leased"
    assert holder.wait(timeout=60) == 0
    with Store(path) as other:
        assert other.status("logged", config, code=cell_code) == "done"
    assert log.read_text().count("\n") == 1


def test_closing_a_store_releases_its_leases(tmp_path):
    path = tmp_path / "s.sqlite"
    with Store(path) as a:
        a.claim("c", {"x": 1}, code=CODE)
    with Store(path, lease_seconds=3600) as b:
        assert b.status("c", {"x": 1}, code=CODE) == "running"  # a partial record, not a live lease
        assert b.claim("c", {"x": 1}, code=CODE) == "claimed"


def _raises(config):
    raise ValueError(f"bad cell {config['x']}\nsecond line")


@pytest.mark.parametrize("kind", ["inline", "process"])
def test_a_cell_that_raises_is_recorded_failed_with_its_message(tmp_path, kind):
    with Store(tmp_path / "s.sqlite") as s, open_executor(kind, workers=1) as ex:
        with pytest.raises(CellError, match=r"failed: ValueError: bad cell 7 second line") as info:
            s.map("r", _raises, [{"x": 7}], executor=ex, progress=False)
        assert "\n" not in str(info.value)
        code = Store.code_of(_raises)
        assert s.status("r", {"x": 7}, code=code) == "failed"
        assert s.records("r", code=code, status="failed") == [({"x": 7}, {"error": "ValueError: bad cell 7 second line"})]
        assert s.counts("r") == {"failed": 1}


SWEEP = """
name = "leases"
[base]
dataset = "synthetic"
data_size = 200
width = 0.0625
epochs = 2
batch_size = 32
sigma_w = [0.5, 1.0, 2.0, 4.0]
optimizer = "sgd"
lr = [0.05, 0.1]
[options]
threads = 1
"""


def _sweep_logging_runs(spec, store, log):
    """``implicitbias sweep`` in a fresh interpreter, every training run noted in ``log``."""
    code = (
        "import json, sys\n"
        "import implicitbias.validation.run as run\n"
        "train = run.execute\n"
        "def execute(config, **kw):\n"
        f"    with open({str(log)!r}, 'a') as fh: fh.write(json.dumps(config, sort_keys=True) + '\\n')\n"
        "    return train(config, **kw)\n"
        "execute.__module__ = train.__module__  # the same code fingerprint: a log, not new code\n"
        "run.execute = execute\n"
        "from implicitbias.cli import main\n"
        f"sys.exit(main(['--store', {str(store)!r}, 'sweep', {str(spec)!r}, '--no-progress']))\n"
    )
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env={**os.environ, "OMP_NUM_THREADS": "1"})


@pytest.mark.slow
def test_two_sweeps_on_one_store_train_each_run_once(tmp_path):
    spec, store, log = tmp_path / "leases.toml", tmp_path / "s.sqlite", tmp_path / "runs.jsonl"
    spec.write_text(SWEEP)
    Store(store).close()
    procs = [_sweep_logging_runs(spec, store, log) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [e for _, e in outs]
    trained = log.read_text().splitlines()
    assert len(trained) == len(set(trained)) == 8, f"{len(trained)} trainings for 8 runs"
    assert all("8 runs done" in out for out, _ in outs)
