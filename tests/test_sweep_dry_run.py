"""``sweep --dry-run`` checks what the run will check: every run's plan (minibatch sizes, rates
capped so the clocks cannot overflow, the data set against the batch size), the grid size before the grid is built, the
store's writability and free space; an empty spec is an error, not the built-in defaults.  And
the messages of the command line around it (empty IMPLICITBIAS_STORE, IMPLICITBIAS_TRACEBACK=0,
``--law ""``, outputs that are dangling links or on a full filesystem)."""

import os

import pytest

from implicitbias.cli import main
from implicitbias.store import Store
from implicitbias.theory.params import ParameterError
from implicitbias.validation.sweep import check_data, load_spec
from test_store_files import read_only
from test_store_full_disk import small_fs  # noqa: F401 (a fixture)

BASE = {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 1, "batch_size": 16}


@pytest.mark.parametrize(
    "entries, match",
    [
        ({"train_size": 33, "batch_size": 16}, "last minibatch of one image"),  # 33 = 2 x 16 + 1
        ({"data_size": 3, "batch_size": 2}, "the test split of synthetic is empty"),
        ({"train_size": 20, "batch_size": 32}, "batch_size must be <= the 20 training images"),
        ({"lr": 1e308}, r"lr must be a finite number > 0 and <= 1e\+100"),  # rates capped: the clocks stay finite
        ({"weight_decay": 1e308, "lr": 0.1, "epochs": 30}, r"weight_decay must be a finite number >= 0 and <= 1e\+100"),
        ({"epochs": 1.0}, "epochs must be an integer"),
        ({"batch_size": [16, 17.0]}, "batch_size must be an integer"),
    ],
)
def test_a_dry_run_refuses_what_the_run_refuses(tmp_path, capsys, entries, match):
    with pytest.raises(ParameterError, match=match):
        check_data(load_spec({"base": {**BASE, **entries}}))
    spec = tmp_path / "spec.toml"
    spec.write_text("[base]\n" + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in {**BASE, **entries}.items()))
    assert main(["--store", str(tmp_path / "s.sqlite"), "sweep", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" not in err, err


def test_the_run_refuses_what_the_dry_run_refuses():
    """The same check, from the run's side: ``run.execute`` refuses a last minibatch of one image."""
    from implicitbias.validation.run import canonical_config, execute

    with pytest.raises(ParameterError, match="last minibatch of one image"):
        execute(canonical_config({**BASE, "train_size": 33}), options={"threads": 1})


@pytest.mark.parametrize("text", ["", "# nothing\n", 'name = "x"\n', "[base]\n", '[[grid]]\nlabel = "a"\n'])
def test_an_empty_spec_is_an_error(tmp_path, text):
    path = tmp_path / "empty.toml"
    path.write_text(text)
    with pytest.raises(ParameterError, match="sets no run entries"):
        load_spec(path)


def test_dev_null_is_not_a_spec(capsys):
    assert main(["sweep", os.devnull, "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a regular file" in err, err


def test_a_huge_grid_is_refused_before_it_is_built():
    """10^10 runs: building the grid would exhaust memory; its size is computed from the axes."""
    with pytest.raises(ParameterError, match="at most 100000 runs, its grids have 1e"):
        load_spec({"base": {**BASE, **{k: list(range(1, 11)) for k in ("seed", "data_seed")}},
                   "grid": [{"sigma_w": [0.1 * i for i in range(1, 11)], "lr": [0.01 * i for i in range(1, 11)],
                             "epochs": list(range(1, 11)), "crop_padding": list(range(10)),
                             "head_depth": list(range(1, 11)), "eval_every": [1] * 10,
                             "width": [0.0625 * i for i in range(1, 11)], "momentum": [0.1 * i for i in range(10)]}]})


def test_a_dry_run_refuses_a_read_only_store(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("[base]\n" + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in BASE.items()))
    store = tmp_path / "ro" / "s.sqlite"
    store.parent.mkdir()
    Store(store).close()
    with read_only(store, store.parent):
        assert main(["--store", str(store), "sweep", str(spec), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "read-only" in err, err


def test_a_dry_run_creates_no_store_and_refuses_one_it_could_not_create(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("[base]\n" + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in BASE.items()))
    store = tmp_path / "new" / "s.sqlite"
    assert main(["--store", str(store), "sweep", str(spec), "--dry-run"]) == 0
    assert "1 runs; 0 done, 0 interrupted (rerun), 1 to run (dry run" in capsys.readouterr().out
    assert not (tmp_path / "new").exists()
    (tmp_path / "ro").mkdir()
    with read_only(tmp_path / "ro"):
        assert main(["--store", str(tmp_path / "ro" / "s.sqlite"), "sweep", str(spec), "--dry-run"]) == 2
    assert "cannot be created: folder" in capsys.readouterr().err


def test_a_dry_run_refuses_a_store_on_a_full_filesystem(small_fs, tmp_path, capsys):  # noqa: F811
    spec = tmp_path / "spec.toml"
    spec.write_text("[base]\n" + "".join(f"{k} = {v!r}\n".replace("'", '"') for k, v in BASE.items()))
    with open(small_fs / "ballast", "wb") as fh:
        with pytest.raises(OSError):
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
    assert main(["--store", str(tmp_path / "s.sqlite"), "analyse", "--out", str(small_fs / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "filesystem is full" in err and str(small_fs / "out") in err, err


def test_empty_store_variable_is_an_error(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("IMPLICITBIAS_STORE", "")
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    assert main(["sweep", "tiny", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "IMPLICITBIAS_STORE is set but empty" in err, err
    assert not (tmp_path / "cache").exists()  # no default store was created


@pytest.mark.parametrize("value", ["0", ""])
def test_traceback_variable_off(monkeypatch, capsys, value):
    import implicitbias.commands.clocks as clocks

    def broken(args):
        raise RuntimeError("a bug")

    monkeypatch.setenv("IMPLICITBIAS_TRACEBACK", value)
    monkeypatch.setattr(clocks, "run", broken)
    assert main(["clocks"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "Traceback" not in err, err


def test_empty_law_path_is_an_error(capsys):
    assert main(["predict", "--law", ""]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "law must be the path" in err, err


def test_a_dangling_output_link_is_refused_before_computing(tmp_path, capsys):
    (tmp_path / "out").symlink_to(tmp_path / "gone")
    assert main(["--store", str(tmp_path / "s.sqlite"), "analyse", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dangling symbolic link" in err and str(tmp_path / "out") in err, err
    (tmp_path / "real").mkdir()
    (tmp_path / "real" / "analysis.md").symlink_to(tmp_path / "gone.md")
    assert main(["--store", str(tmp_path / "s.sqlite"), "analyse", "--out", str(tmp_path / "real")]) == 2
    assert "analysis.md is a dangling symbolic link" in capsys.readouterr().err
