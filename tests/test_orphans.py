"""No orphans: the workers of ``--executor process`` (and of a Dask LocalCluster) end with their
client when the client is killed with SIGKILL, and so does the multiprocessing resource tracker."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).parent


def _sleeper(path):
    """A task that says where it runs, then blocks far longer than the test."""
    Path(path).write_text(str(os.getpid()))
    time.sleep(600)


def _children(pid: int) -> set[int]:
    """Every live process whose parent is ``pid``."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                out.add(int(entry.name))
    return out


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has ended; only its parent's reaping is left


CLIENTS = {
    "process": (
        "from implicitbias.executors import open_executor\n"
        "with open_executor('process', workers=2) as ex:\n"
        "    futures = [ex.submit(_sleeper, p) for p in PATHS]\n"
        "    time.sleep(600)\n"
    ),
    "dask": (
        "from implicitbias.executors import open_executor\n"
        "with open_executor('dask', workers=2) as ex:\n"
        "    futures = [ex.submit(_sleeper, p) for p in PATHS]\n"
        "    time.sleep(600)\n"
    ),
}


def _kill_client_and_watch(tmp_path, kind):
    paths = [str(tmp_path / f"worker{i}.pid") for i in range(2)]
    code = (
        f"import sys, time; sys.path.insert(0, {str(TESTS)!r})\n"
        "from test_orphans import _sleeper\n"
        f"PATHS = {paths!r}\n"
        "if __name__ == '__main__':\n" + "".join("    " + line + "\n" for line in CLIENTS[kind].splitlines())
    )
    script = tmp_path / "client.py"
    script.write_text(code)
    client = subprocess.Popen([sys.executable, str(script)], env={**os.environ, "OMP_NUM_THREADS": "1"})
    deadline = time.monotonic() + 120
    while not all(Path(p).exists() and Path(p).read_text() for p in paths):
        assert client.poll() is None and time.monotonic() < deadline, "the client did not start its workers"
        time.sleep(0.05)
    workers = {int(Path(p).read_text()) for p in paths}
    descendants = _children(client.pid)
    assert workers <= descendants or kind == "dask"
    client.send_signal(signal.SIGKILL)
    client.wait()
    t0 = time.monotonic()
    left = workers | descendants
    while left and time.monotonic() - t0 < 30:
        left = {p for p in left if _alive(p)}
        time.sleep(0.05)
    for p in left:  # never leave them behind, whatever the verdict
        os.kill(p, signal.SIGKILL)
    return left, time.monotonic() - t0, len(workers | descendants)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_process_pool_workers_end_with_a_sigkilled_client(tmp_path):
    left, seconds, watched = _kill_client_and_watch(tmp_path, "process")
    assert watched >= 3  # two workers and the resource tracker
    assert not left, f"{len(left)} of {watched} processes outlived the client ({seconds:.1f} s)"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_dask_local_cluster_workers_end_with_a_sigkilled_client(tmp_path):
    left, seconds, watched = _kill_client_and_watch(tmp_path, "dask")
    assert not left, f"{len(left)} of {watched} processes outlived the client ({seconds:.1f} s)"
