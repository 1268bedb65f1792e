"""A store is a file you named (issue 31): ``:memory:`` (keeps nothing), ``file:`` URIs (SQLite
reads them as URIs, not as the path the package checks) and paths SQLite cannot open are refused
before anything runs, in one line; the default location follows the XDG base directory
specification (an empty or relative ``XDG_CACHE_HOME`` is ignored, an empty or relative ``HOME``
refused, never the filesystem root); a failure at open says it happened at open."""

import sqlite3

import pytest

import implicitbias as ib
from implicitbias.cli import main
from implicitbias.store import MAX_PATH_BYTES, Store, StoreError, default_store_path

NOT_FILES = [":memory:", "file:m.sqlite?mode=memory", "file:s.sqlite", "file:s.sqlite?mode=ro"]


@pytest.mark.parametrize("name", NOT_FILES)
def test_a_store_that_is_no_file_on_disk_is_refused_and_nothing_is_written(tmp_path, monkeypatch, name):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(StoreError, match=r"^store must be the path of an SQLite file on disk"):
        Store(name)
    with pytest.raises(StoreError, match=r"^store must"):
        ib.phase_diagram(2, 1, store=name)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", NOT_FILES)
@pytest.mark.parametrize("command", [["sweep", "tiny", "--dry-run"], ["phase", "--K-max", "2", "--L-max", "1"]])
def test_cli_refuses_a_store_that_is_no_file_in_one_line(tmp_path, monkeypatch, capsys, name, command):
    monkeypatch.chdir(tmp_path)
    assert main(["--store", name, *command]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert "error: --store must be the path of an SQLite file on disk" in line and captured.out == ""
    assert list(tmp_path.iterdir()) == []


def test_a_path_longer_than_sqlite_opens_is_refused_before_a_folder_is_made(tmp_path):
    deep = tmp_path / ("a" * 200) / ("b" * 200) / ("c" * 200) / "s.sqlite"
    with pytest.raises(StoreError, match=rf"^store path must be at most {MAX_PATH_BYTES} bytes"):
        Store(deep)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("extra", [0, 1])
def test_the_path_limit_is_sqlites(tmp_path, extra):
    """A path of exactly 504 bytes opens; one byte more is refused (SQLite itself fails there:
    its 512-byte paths must hold the journal's name, the path plus '-journal')."""
    folder = tmp_path / ("d" * 200) / ("e" * 200)
    folder.mkdir(parents=True)
    name = "f" * (504 + extra - len(str(folder)) - 1)
    if extra:
        with pytest.raises(StoreError, match=r"^store path must be at most 504 bytes"):
            Store(folder / name)
        with pytest.raises(sqlite3.OperationalError, match="unable to open"):  # SQLite's own limit
            sqlite3.connect(folder / name).execute("CREATE TABLE t (a)")
    else:
        with Store(folder / name) as store:
            assert store.counts("x") == {}


def test_a_failure_at_open_says_it_happened_at_open(tmp_path, monkeypatch, capsys):
    def refuse(self):
        raise sqlite3.OperationalError("unable to open database file")

    monkeypatch.setattr(Store, "_connect", refuse)
    assert main(["--store", str(tmp_path / "s.sqlite"), "phase", "--K-max", "2", "--L-max", "1"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "cannot be opened by SQLite (unable to open database file)" in line and "during the run" not in line


# -- the default location ------------------------------------------------------------------------

@pytest.fixture
def env(monkeypatch, tmp_path):
    monkeypatch.delenv("IMPLICITBIAS_STORE", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return monkeypatch


def test_the_default_store_follows_xdg_cache_home(env, tmp_path):
    env.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert default_store_path() == tmp_path / "cache" / "implicitbias" / "store.sqlite"


@pytest.mark.parametrize("xdg", ["", "relative/cache", "."])
def test_an_empty_or_relative_xdg_cache_home_is_ignored(env, tmp_path, xdg):
    env.setenv("XDG_CACHE_HOME", xdg)
    assert default_store_path() == tmp_path / "home" / ".cache" / "implicitbias" / "store.sqlite"


@pytest.mark.parametrize("home", ["", "relative", "./x"])
def test_an_empty_or_relative_home_is_refused_never_the_root(env, capsys, home):
    env.setenv("HOME", home)
    with pytest.raises(StoreError, match=r"^HOME must be an absolute path"):
        default_store_path()
    assert main(["sweep", "tiny", "--dry-run"]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert "HOME must be an absolute path" in line
