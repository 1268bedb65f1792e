"""Users' own code is a guest (``validation.external.guest``): a model factory, a data loader or a
model that fails is reported as the user's (one line naming ``arch`` or ``dataset``, the user's
exception and where), ``sys.exit`` and a ``KeyboardInterrupt`` raised by the code itself are
contained (the run stored ``failed``, never left ``running``; exit status 2), while a real
interrupt still stops the sweep; loaded data are checked at the boundary, and a run whose logits
are not finite on any split is ``diverged``, never ``done`` (issue 31)."""

import math
import signal

import pytest

import implicitbias as ib
from implicitbias.cli import main
from implicitbias.store import Store
from implicitbias.theory import params
from implicitbias.validation import run as run_mod
from implicitbias.validation.external import UserCodeError
from implicitbias.validation.sweep import check_data, load_spec

BASE = {"dataset": "own_pipeline:blobs", "arch": "own_pipeline:tiny_net", "width": 0.25, "batch_size": 27, "epochs": 3,
        "sigma_w": [0.5, 2.0], "optimizer": "sgd", "lr": 0.05}


def spec(**entries):
    return {"name": "faulty", "base": {**BASE, **entries}, "options": {"threads": 1}}


def toml(path, **entries):
    body = "\n".join(f"{k} = {v!r}".replace("'", '"') for k, v in {**BASE, **entries}.items())
    path.write_text(f'name = "faulty"\n[base]\n{body}\n[options]\nthreads = 1\n')
    return path


def counts(path) -> dict:
    with Store(path) as store:
        return store.counts(run_mod.KIND)


# -- before anything trains: import, construction, loading --------------------------------------

BEFORE = [
    ({"arch": "faulty_pipeline:raising_factory"}, "arch", r"RuntimeError: my factory is broken during construction"),
    ({"arch": "faulty_pipeline:exiting_factory"}, "arch", r"SystemExit: 3 during construction"),
    ({"arch": "faulty_pipeline:interrupting_factory"}, "arch", r"KeyboardInterrupt during construction"),
    ({"dataset": "faulty_pipeline:raising_loader"}, "dataset", r"ValueError: cannot read my files during loading"),
    ({"dataset": "faulty_pipeline:exiting_loader"}, "dataset", r"SystemExit: 4 during loading"),
]


@pytest.mark.parametrize("entries, name, what", BEFORE)
def test_a_failing_factory_or_loader_is_named_with_its_own_message(entries, name, what):
    reference = entries[name]
    with pytest.raises(UserCodeError, match=rf"^{name} '{reference}' raised {what} \(in your .*not in implicitbias\)$"):
        check_data(load_spec(spec(**entries)))


@pytest.mark.parametrize("entries, name, what", BEFORE)
def test_cli_dry_run_of_failing_user_code_is_one_line_exit_2(tmp_path, capsys, entries, name, what):
    status = main(["--store", str(tmp_path / "s.sqlite"), "sweep", str(toml(tmp_path / "f.toml", **entries)),
                   "--dry-run", "--no-progress"])
    captured = capsys.readouterr()
    assert status == 2
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"implicitbias sweep: error: {name} '{entries[name]}' raised") and "internal error" not in line


@pytest.mark.parametrize("module, code, what", [("ib_exits_at_import", "import sys\nsys.exit(5)\n", "SystemExit: 5"),
                                                ("ib_raises_at_import", "raise RuntimeError('half written')\n",
                                                 "RuntimeError: half written")])
def test_a_module_that_fails_at_its_import_is_named(tmp_path, capsys, module, code, what):
    (tmp_path / f"{module}.py").write_text(code)
    status = main(["--store", str(tmp_path / "s.sqlite"), "sweep", "--dry-run", "--no-progress",
                   str(toml(tmp_path / "f.toml", arch=f"{module}:net"))])
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert status == 2
    assert f"arch '{module}:net' raised {what} during the import of {module}" in line


# -- during training: the run is stored failed -------------------------------------------------

DURING = [
    ("faulty_pipeline:exits_in_training", "SystemExit: 0"),
    ("faulty_pipeline:interrupts_itself_in_training", "KeyboardInterrupt"),
    ("faulty_pipeline:raises_in_training", "RuntimeError: my forward broke"),
]


@pytest.mark.parametrize("arch, what", DURING)
def test_user_code_failing_in_training_leaves_a_failed_run_not_a_running_one(tmp_path, arch, what):
    path = tmp_path / "s.sqlite"
    with pytest.raises(UserCodeError, match=rf"^arch '{arch}' raised {what} during the forward and backward pass at "
                                            r"epoch 1 "):
        ib.sweep(spec(arch=arch), store=path)
    assert counts(path) == {"failed": 1}


@pytest.mark.parametrize("arch, what", DURING)
def test_cli_sweep_with_user_code_failing_in_training_exits_2(tmp_path, capsys, arch, what):
    path = tmp_path / "s.sqlite"
    status = main(["--store", str(path), "sweep", str(toml(tmp_path / "f.toml", arch=arch)), "--no-progress"])
    captured = capsys.readouterr()
    assert status == 2
    (line,) = [x.split("\r")[-1] for x in captured.err.splitlines() if x.split("\r")[-1].strip()]
    assert line.startswith(f"implicitbias sweep: error: arch '{arch}' raised {what} during the forward and backward")
    assert counts(path) == {"failed": 1}


def test_user_code_failing_in_a_worker_process_is_named_the_same_way(tmp_path, capsys):
    """The error crosses from the worker as a ``UserCodeError`` (it pickles), one line, the run failed."""
    path = tmp_path / "s.sqlite"
    arch = "faulty_pipeline:raises_in_training"
    status = main(["--store", str(path), "sweep", str(toml(tmp_path / "f.toml", arch=arch, sigma_w=0.5)),
                   "--no-progress", "--executor", "process", "--workers", "1"])
    captured = capsys.readouterr()
    assert status == 2
    (line,) = [x.split("\r")[-1] for x in captured.err.splitlines() if x.split("\r")[-1].strip()]
    assert line.startswith(f"implicitbias sweep: error: arch '{arch}' raised RuntimeError: my forward broke during")
    assert counts(path) == {"failed": 1}


def test_a_real_interrupt_while_user_code_runs_still_interrupts_the_sweep(tmp_path, capsys):
    """The model sends SIGINT to its own process from inside its forward: a real signal, so the
    command line's interrupt path answers (exit 130), as for a user's Ctrl-C."""
    path = tmp_path / "s.sqlite"
    status = main(["--store", str(path), "sweep", "--no-progress",
                   str(toml(tmp_path / "f.toml", arch="faulty_pipeline:signalled_in_training"))])
    captured = capsys.readouterr()
    assert status == 128 + signal.SIGINT
    assert "interrupted by SIGINT" in captured.err and "raised" not in captured.err
    assert "failed" not in counts(path)


def test_a_real_interrupt_in_user_code_interrupts_an_api_sweep(tmp_path):
    with pytest.raises(KeyboardInterrupt) as info:
        ib.sweep(spec(arch="faulty_pipeline:signalled_in_training"), store=tmp_path / "s.sqlite")
    assert not isinstance(info.value, UserCodeError)


# -- data checked at the boundary ---------------------------------------------------------------

DATA = [
    ("faulty_pipeline:infinite_test_inputs", r"finite inputs x_test"),
    ("faulty_pipeline:complex_inputs", r"real numbers.*complex"),
    ("faulty_pipeline:no_training_inputs", r"at least 3 training inputs.*gave 0 training"),
    ("faulty_pipeline:empty_validation_split", r"non-empty splits: the val split"),
    ("faulty_pipeline:huge_label", r"labels of 2 to 100000 classes.*K = 1000000001"),
]


@pytest.mark.parametrize("dataset, what", DATA)
def test_loaded_data_are_checked_at_the_boundary(dataset, what):
    with pytest.raises(params.ParameterError, match=rf"^dataset must .*{what}"):
        check_data(load_spec(spec(dataset=dataset)))


def test_a_run_whose_test_logits_are_not_finite_is_diverged_never_done(tmp_path):
    path = tmp_path / "s.sqlite"
    result = ib.sweep(spec(dataset="faulty_pipeline:large_test_inputs", arch="faulty_pipeline:nan_on_large_inputs"),
                      store=path)
    assert [r["status"] for r in result.records] == ["diverged", "diverged"]
    assert all(r["summary"]["diverged_epoch"] == 0 for r in result.records)
    assert all(math.isfinite(r["history"][0]["val_loss"]) for r in result.records)  # only the test split is NaN
    served = ib.sweep(spec(dataset="faulty_pipeline:large_test_inputs", arch="faulty_pipeline:nan_on_large_inputs"),
                      store=path)
    assert [r["status"] for r in served.records] == ["diverged", "diverged"]  # as stored


@pytest.mark.parametrize("split", ["train_loss", "val_loss", "test_loss"])
def test_divergence_reads_a_non_finite_loss_on_every_split(split):
    row = {"train_loss": 1.0, "val_loss": 1.0, "test_loss": 1.0, "kernel_norm": 1.0, "train_acc": 0.9} | {split: None}
    why = run_mod.divergence(row, initial_loss=1.0, num_classes=3, epoch=1, warmup=5)
    assert why == "non-finite loss or weights"
    assert run_mod.divergence(row | {split: 1.0}, initial_loss=1.0, num_classes=3, epoch=1, warmup=5) is None
