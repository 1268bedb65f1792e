"""A full disk mid-sweep loses nothing: the store's filesystem (an 8 MiB tmpfs mounted inside the
test) fills while a sweep runs; the sweep stops with one line, and once space is freed the store
opens (the checkpoint the full disk tore is finished from the write-ahead log), serves every run
that completed, and the rerun computes only the rest."""

import os
import subprocess

import pytest

from implicitbias.cli import error_line
from implicitbias.store import Store

CODE = "test-code"
N = 40
FILL_AT = 6  # the cell during which the disk fills


@pytest.fixture
def small_fs(tmp_path):
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    res = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(mnt)], capture_output=True, text=True)
    if res.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {res.stderr.strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=True)


def _cell(ballast):
    def fn(config):
        if config["x"] == FILL_AT and not ballast.exists():
            with open(ballast, "wb") as fh:  # another program fills the filesystem
                try:
                    while True:
                        fh.write(b"\0" * 4096)
                        fh.flush()
                except OSError:
                    pass
        return {"x": config["x"], "pad": "y" * 3000}
    return fn


def _header_ahead_of_file(path):
    with open(path, "rb") as fh:
        header = fh.read(100)
    return int.from_bytes(header[28:32], "big") * int.from_bytes(header[16:18], "big") > path.stat().st_size


def test_full_disk_mid_sweep_then_freed_resumes_with_every_completed_run(small_fs):
    path, ballast = small_fs / "store.sqlite", small_fs / "ballast"
    configs = [{"x": i} for i in range(N)]
    with pytest.raises(Exception) as info:
        with Store(path) as s:
            s.map("cell", _cell(ballast), configs, progress=False, code=CODE)
    line = error_line(info.value)
    assert "full" in line and "completed records are kept" in line and "\n" not in line, line
    torn = _header_ahead_of_file(path) and (small_fs / "store.sqlite-wal").exists()
    os.remove(ballast)
    with Store(path) as s:
        done = s.counts("cell").get("done", 0)
        assert done >= FILL_AT, s.counts("cell")  # every cell before the fill completed and is served
        assert [s.get("cell", c, code=CODE) for c in configs[:done]] == [{"x": i, "pad": "y" * 3000}
                                                                         for i in range(done)]
        calls = []

        def fn(config):
            calls.append(config["x"])
            return {"x": config["x"], "pad": "y" * 3000}

        records = s.map("cell", fn, configs, progress=False, code=CODE)
    assert [r["x"] for r in records] == list(range(N))
    assert sorted(calls) == list(range(done, N))  # nothing completed is computed again
    assert torn, "the full disk did not tear a checkpoint: the test no longer exercises that path"
