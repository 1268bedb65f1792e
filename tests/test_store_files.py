"""The store survives what users do to files: a folder, a file that is not SQLite, a truncated,
corrupt or foreign database is refused with one line and left byte-for-byte untouched; a
read-only store serves what it holds and says so in one line when something must be written."""

import contextlib
import hashlib
import os
import platform
import sqlite3
import subprocess
import sys

import pytest

from implicitbias.cli import main
from implicitbias.store import APPLICATION_ID, SCHEMA_VERSION, Store, StoreError

CODE = "test-code"


def _filled(path, n=300):
    with Store(path) as s:
        for i in range(n):
            s.put("cell", {"x": i}, {"value": i, "pad": "x" * 200}, code=CODE)
    return path


def _digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "folder"


def _not_sqlite(p):
    p.write_text("name,value\n1,2\n" * 50)


def _truncated(p):
    _filled(p)
    p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2])


def _corrupt(p):
    """A page in the middle overwritten (size and header intact): only quick_check can tell."""
    _filled(p)
    data = bytearray(p.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    middle = (len(data) // page // 2) * page
    data[middle : middle + page] = bytes([0xA5]) * page
    p.write_bytes(bytes(data))


def _foreign(p):
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    db.execute("INSERT INTO contacts VALUES ('a', '1')")
    db.commit()
    db.close()


def _records_of_another_schema(p):
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE records (id INTEGER, payload BLOB)")
    db.commit()
    db.close()


def _like_ours(p):
    """Another program's database with tables and columns named like ours (untyped)."""
    db = sqlite3.connect(p)
    db.execute("CREATE TABLE records (key, kind, config, status, record, started, finished)")
    db.execute("CREATE TABLE epochs (key, epoch, data)")
    db.execute("INSERT INTO records VALUES ('k', 'cell', '{}', 'done', '{}', 0, 0)")
    db.commit()
    db.close()


def _marker(app, version, fill=lambda p: _filled(p, 5)):
    def make(p):
        fill(p)
        db = sqlite3.connect(p)
        db.execute(f"PRAGMA application_id={app}")
        db.execute(f"PRAGMA user_version={version}")
        db.commit()
        db.close()
    return make


DAMAGE = {
    "folder": (lambda p: p.mkdir(), "is a folder"),
    "not SQLite": (_not_sqlite, "is not an SQLite database"),
    "truncated": (_truncated, "is truncated"),
    "corrupt page": (_corrupt, "corrupt|cannot be used"),
    "other program": (_foreign, "of another program"),
    "records of other columns": (_records_of_another_schema, "of another program"),
    "tables named like ours": (_like_ours, "of another program"),
    "our layout, user_version 99": (_marker(0, 99), "of another program"),
    "another application_id": (_marker(1234, 1), "of another program"),
    "a newer layout": (_marker(APPLICATION_ID, SCHEMA_VERSION + 1), "newer implicitbias"),
    "our marker, version 0": (_marker(APPLICATION_ID, 0), "damaged: its schema marker"),
    "our marker, other tables": (_marker(APPLICATION_ID, SCHEMA_VERSION, _foreign), "damaged: its schema marker"),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_damaged_store_is_refused_and_left_untouched(tmp_path, damage):
    make, match = DAMAGE[damage]
    path = tmp_path / "store.sqlite"
    make(path)
    before = _digest(path)
    with pytest.raises(StoreError, match=match) as info:
        Store(path)
    assert str(path) in str(info.value) and "\n" not in str(info.value)
    assert _digest(path) == before
    assert not (tmp_path / "store.sqlite-wal").exists()


COMMANDS = {
    "analyse": ["analyse"],
    "phase": ["phase", "--K-max", "2", "--L-max", "1", "--executor", "inline", "--no-progress"],
    "dynamics": ["dynamics", "trajectory", "--K", "2", "--L", "1"],
    "sweep": ["sweep", "tiny", "--dry-run"],
    "report": ["report", "--only", "flows", "--executor", "inline", "--no-progress"],
    "verify": ["verify", "--no-progress"],
}


@pytest.mark.parametrize("command", list(COMMANDS))
@pytest.mark.parametrize("damage", ["folder", "not SQLite", "truncated", "other program"])
def test_every_command_reports_a_damaged_store_in_one_line(tmp_path, capsys, monkeypatch, command, damage):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "store.sqlite"
    DAMAGE[damage][0](path)
    before = _digest(path)
    assert main(["--store", str(path), *COMMANDS[command]]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err and str(path) in err, err
    assert _digest(path) == before


@pytest.mark.parametrize("store", ["", "  "])
def test_empty_store_path_is_one_line(capsys, store):
    assert main(["--store", store, "clocks"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "store must be the path" in err


def test_store_inside_a_file_is_one_line(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(StoreError, match="is a file, not a folder"):
        Store(tmp_path / "file" / "store.sqlite")


def test_empty_file_becomes_a_store(tmp_path):
    path = tmp_path / "touched.sqlite"
    path.touch()
    with Store(path) as s:
        s.put("cell", {"x": 1}, {"v": 1}, code=CODE)
    with Store(path) as s:
        assert s.get("cell", {"x": 1}, code=CODE) == {"v": 1}


def _unmarked(path, width):
    """A store as this package wrote it before schema markers: the first ``width`` records columns,
    application_id and user_version 0."""
    with Store(path) as s:
        s.put("cell", {"x": 1}, {"v": 1}, code=CODE)
    db = sqlite3.connect(path)
    for column in ("digest", "heartbeat", "owner", "code")[: 11 - width]:
        db.execute(f"ALTER TABLE records DROP COLUMN {column}")
    db.execute("PRAGMA application_id=0")
    db.execute("PRAGMA user_version=0")
    db.commit()
    db.close()


@pytest.mark.parametrize("width", [7, 8, 10])
def test_store_from_before_schema_markers_is_upgraded(tmp_path, width):
    """A store written before records had digests (and owners and heartbeats) gains them and a
    schema marker, keeps its records, and computes."""
    path = tmp_path / "old.sqlite"
    _unmarked(path, width)
    with Store(path) as s:
        recs = s.map("cell", lambda c: {"v": c["x"]}, [{"x": 1}, {"x": 2}], progress=False, code=CODE)
    assert recs == [{"v": 1}, {"v": 2}]
    db = sqlite3.connect(path)
    assert db.execute("PRAGMA application_id").fetchone()[0] == APPLICATION_ID
    assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
    db.close()


# -- read-only stores ----------------------------------------------------------------------------
@contextlib.contextmanager
def read_only(*paths):
    """Make files/folders unwritable, for root too: chattr +i (immutable) as root, chmod otherwise."""
    root = os.geteuid() == 0
    modes = {p: p.stat().st_mode for p in paths}
    for p in paths:
        if root:
            subprocess.run(["chattr", "+i", str(p)], check=True)
        else:
            p.chmod(0o555 if p.is_dir() else 0o444)
    try:
        yield
    finally:
        for p in paths:
            if root:
                subprocess.run(["chattr", "-i", str(p)], check=True)
            p.chmod(modes[p])


def _square(config):
    return {"value": config["x"] ** 2}


@pytest.mark.parametrize("what", ["file", "folder", "both"])
def test_read_only_store_serves_reads_and_refuses_writes_in_one_line(tmp_path, what):
    folder = tmp_path / "ro"
    folder.mkdir()
    path = folder / "store.sqlite"
    code = Store.code_of(_square)
    with Store(path) as s:
        s.map("sq", _square, [{"x": i} for i in range(4)], progress=False)
    before = _digest(path)
    locked = {"file": [path], "folder": [folder], "both": [path, folder]}[what]
    with read_only(*locked), Store(path) as s:
        assert s.readonly
        assert [r["value"] for r in s.map("sq", _square, [{"x": i} for i in range(4)], progress=False)] == [0, 1, 4, 9]
        assert s.get("sq", {"x": 3}, code=code) == {"value": 9}
        with pytest.raises(StoreError, match="read-only: computing 1 missing sq records needs a writable store"):
            s.map("sq", _square, [{"x": 9}], progress=False)
        with pytest.raises(StoreError, match="read-only"):
            s.put("sq", {"x": 9}, {"value": 81}, code=code)
    assert _digest(path) == before


def test_read_only_store_on_the_command_line(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "store.sqlite"
    Store(path).close()
    with read_only(path):
        assert main(["--store", str(path), "analyse", "--out", str(tmp_path / "a")]) == 0
        capsys.readouterr()
        assert main(["--store", str(path), *COMMANDS["phase"]]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "read-only" in err


def test_new_store_in_a_read_only_folder_is_one_line(tmp_path):
    folder = tmp_path / "ro"
    folder.mkdir()
    with read_only(folder), pytest.raises(StoreError, match="read-only"):
        Store(folder / "store.sqlite")


# -- records damaged inside a sound file ---------------------------------------------------------
RECORD_DAMAGE = {
    "record not JSON": "UPDATE records SET record = substr(record, 1, 5)",
    "record {}": "UPDATE records SET record = '{}'",
    "record a list": "UPDATE records SET record = '[1, 2]'",
    "record NULL": "UPDATE records SET record = NULL",
    "config truncated": "UPDATE records SET config = substr(config, 1, length(config) - 1)",
    "config of another cell": "UPDATE records SET config = '{\"x\":99}'",
}


@pytest.mark.parametrize("damage", list(RECORD_DAMAGE))
def test_a_damaged_record_is_recomputed_and_never_served(tmp_path, damage):
    path = tmp_path / "store.sqlite"
    configs = [{"x": i} for i in range(3)]
    with Store(path) as s:
        s.map("sq", _square, configs, progress=False)
    db = sqlite3.connect(path)
    db.execute(RECORD_DAMAGE[damage] + " WHERE key = (SELECT key FROM records ORDER BY rowid LIMIT 1 OFFSET 1)")
    db.commit()
    db.close()
    code = Store.code_of(_square)
    with Store(path) as s:
        assert s.get("sq", {"x": 1}, code=code) is None
        assert s.status("sq", {"x": 1}, code=code) == "damaged"
        with pytest.raises(StoreError, match="1 damaged sq record") as info:
            s.records("sq", code=code)
        assert "\n" not in str(info.value)
        calls = []

        def fn(config):
            calls.append(config["x"])
            return _square(config)

        assert [r["value"] for r in s.map("sq", fn, configs, progress=False, code=code)] == [0, 1, 4]
        assert len(s.records("sq", code=code)) == 3  # the recomputed row replaced the damaged one
    assert calls == [1]


def test_a_read_only_store_from_before_schema_markers_is_served_untouched(tmp_path):
    path = tmp_path / "old.sqlite"
    _unmarked(path, 10)
    before = _digest(path)
    with read_only(path, tmp_path), Store(path) as s:
        assert s.readonly and s.get("cell", {"x": 1}, code=CODE) == {"v": 1}
        assert s.records("cell", code=CODE) == [({"x": 1}, {"v": 1})]
    assert _digest(path) == before


# another process asks whether it could write-lock SQLite's shared-lock bytes of the file (F_GETLK: the
# layout of struct flock on Linux x86-64); True while this process holds its shared lock
_LOCK_PROBE = r'''
import fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDWR)
lock = struct.pack("hhqqi4x", fcntl.F_WRLCK, 0, 0x40000002, 510, 0)
print(struct.unpack("hhqqi4x", fcntl.fcntl(fd, fcntl.F_GETLK, lock))[0] != fcntl.F_UNLCK)
'''


def _locked_elsewhere(path) -> bool:
    import sys

    out = subprocess.run([sys.executable, "-c", _LOCK_PROBE, str(path)], capture_output=True, text=True, check=True)
    return out.stdout.strip() == "True"


@pytest.mark.skipif(not sys.platform.startswith("linux") or platform.machine() != "x86_64",
                    reason="the probe packs Linux x86-64's struct flock")
def test_a_second_store_on_an_open_file_keeps_the_first_ones_locks(tmp_path):
    """SQLite's locks are the process's POSIX locks, and closing any descriptor of the file drops them:
    opening the same file again in this process (a notebook's second ``open_store``, the report's prefetch)
    must not read it behind SQLite, or another process could take it and remove the log under the open
    connections."""
    path = _filled(tmp_path / "s.sqlite", 3)
    with Store(path) as first:
        assert _locked_elsewhere(path)
        with Store(path) as second:
            assert second.get("cell", {"x": 1}, code=CODE)["value"] == 1
            assert _locked_elsewhere(path)
        assert _locked_elsewhere(path) and first.get("cell", {"x": 2}, code=CODE)["value"] == 2
    assert not _locked_elsewhere(path)
    with Store(path) as again:  # closed everywhere: the file is checked again on open
        assert again.get("cell", {"x": 0}, code=CODE)["value"] == 0
