"""Sweeps through ``--executor slurm`` on a real Slurm cluster (the single node that
``.ci/slurm-up`` starts: Debian's slurm-wlm and munge): the records equal those of an inline sweep,
a client killed with SIGKILL mid-sweep is resumed by a rerun with nothing completed computed again,
and no job is left in the queue afterwards (the killed client's jobs end by dask's death timeout,
the finished client's are cancelled on close).  Skips, saying why, where Slurm or dask-jobqueue is
absent."""

import math
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

from implicitbias.cli import main
from implicitbias.store import Store
from implicitbias.validation.run import KIND, execute
from implicitbias.validation.sweep import load_spec
from test_sweep_resume import SPEC as RESUME_SPEC
from test_sweep_resume import _done_rows

SPEC = RESUME_SPEC.replace("epochs = 3", "epochs = 6") + 'device = "cpu"\n'  # 6 runs of a few seconds
RUNS = 6
JOB = f"implicitbias-test-{os.getpid()}"


def _why_not() -> str | None:
    try:
        import dask_jobqueue  # noqa: F401
    except ImportError:
        return "dask-jobqueue is not installed (pip install 'implicitbias[slurm]')"
    if shutil.which("sinfo") is None or shutil.which("sbatch") is None:
        return "Slurm is not installed (.ci/slurm-up installs and starts a single-node cluster)"
    res = subprocess.run(["sinfo", "-h", "-o", "%T"], capture_output=True, text=True, timeout=30)
    if res.returncode != 0 or not {"idle", "mixed", "allocated"} & set(res.stdout.split()):
        return f"no Slurm node is up (sinfo: {(res.stdout + res.stderr).strip() or 'nothing'}; run .ci/slurm-up)"
    return None


WHY_NOT = _why_not()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


@pytest.fixture
def no_jobs_left():
    """Whatever the verdict, this test's jobs are cancelled at the end."""
    yield
    subprocess.run(["scancel", "-n", JOB], capture_output=True, timeout=30)


def _env(tmp_path):
    conf = {"CORES": "1", "PROCESSES": "1", "MEMORY": "2GB", "WALLTIME": "00:10:00", "DEATH_TIMEOUT": "5",
            "JOB_NAME": JOB, "LOG_DIRECTORY": str(tmp_path / "logs"), "LOCAL_DIRECTORY": str(tmp_path / "work")}
    return {**os.environ, "OMP_NUM_THREADS": "1", **{f"DASK_JOBQUEUE__SLURM__{k}": v for k, v in conf.items()}}


def _queued() -> list[str]:
    res = subprocess.run(["squeue", "-h", "-n", JOB, "-o", "%i %T"], capture_output=True, text=True, timeout=30)
    return res.stdout.split("\n")[:-1]


def _wait_for_empty_queue(seconds):
    deadline = time.monotonic() + seconds
    while _queued() and time.monotonic() < deadline:
        time.sleep(0.5)
    return _queued()


def _sweep(tmp_path, store):
    cmd = [sys.executable, "-m", "implicitbias", "--store", str(store), "sweep", str(tmp_path / "spec.toml"),
           "--executor", "slurm", "--workers", "2", "--no-progress"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env(tmp_path))


def _same(a, b, path="record"):
    """Equal records up to float rounding (another process, same code), wall-clock times aside."""
    if isinstance(a, dict):
        assert set(a) == set(b), path
        for k in a:
            if k != "seconds":
                _same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list):
        assert len(a) == len(b), path
        for i, (x, y) in enumerate(zip(a, b)):
            _same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and isinstance(b, float):
        assert math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9), f"{path}: {a} != {b}"
    else:
        assert a == b, f"{path}: {a!r} != {b!r}"


def test_slurm_sweep_equals_inline_resumes_after_a_killed_client_and_leaves_no_jobs(tmp_path, capsys, no_jobs_left):
    (tmp_path / "spec.toml").write_text(SPEC)
    inline, slurm = tmp_path / "inline.sqlite", tmp_path / "slurm.sqlite"
    assert main(["--store", str(inline), "sweep", str(tmp_path / "spec.toml"), "--no-progress"]) == 0
    capsys.readouterr()

    proc = _sweep(tmp_path, slurm)
    deadline = time.monotonic() + 120
    while len(_done_rows(slurm)) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
        time.sleep(0.1)
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    before = _done_rows(slurm)
    assert 2 <= len(before) < RUNS, "the client must be killed mid-sweep"
    assert not _wait_for_empty_queue(60), "the killed client's jobs outlived dask's death timeout"

    proc = _sweep(tmp_path, slurm)
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert f"{len(before)} done" in out and f"{RUNS} runs done" in out, out
    after = _done_rows(slurm)
    assert {k: after[k] for k in before} == before  # nothing completed before the kill was computed again
    assert not _wait_for_empty_queue(30), "jobs left in the queue after the sweep finished"

    spec = load_spec(tmp_path / "spec.toml")
    with Store(inline) as a, Store(slurm) as b:
        code = a.code_of(execute)
        for config in spec.configs:
            _same(a.get(KIND, config, code=code), b.get(KIND, config, code=code))
