"""Bad sweep specs fail as one ParameterError before any run starts; good ones expand as a grid.
Reading a spec never touches data files; the checks that need the data are ``check_data``'s."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.cli import main
from implicitbias.store import Store
from implicitbias.theory.params import ParameterError
from implicitbias.validation.data import DataUnavailable
from implicitbias.validation.sweep import check_data, load_spec, packaged_specs

BASE = {"dataset": "synthetic", "data_size": 100, "width": 0.0625, "epochs": 1, "batch_size": 16}


def _spec(**grid):
    return {"name": "t", "base": dict(BASE), "grid": [grid]}


@pytest.mark.parametrize(
    "grid, match",
    [
        ({"optimizer": "lbfgs"}, "optimizer must be one of"),
        ({"sigma_w": [1.0, -0.5]}, "sigma_w must be"),
        ({"batch_size": 4096}, "batch_size must be <= the"),
        ({"dataset": "mnist", "data_path": "/no/such/folder"}, "does not exist"),
        ({"dataset": "mnist"}, "needs data_path"),
        ({"momentum_typo": 0.9}, "run config key must be one of"),
        ({"lr": [0.1, float("nan")]}, "lr must be"),
        ({"epochs": 0}, "epochs must be"),
        ({"seed": []}, "non-empty list"),
    ],
)
def test_bad_entries(grid, match):
    with pytest.raises(ParameterError, match=match):
        check_data(load_spec(_spec(**grid)))


def test_reading_a_spec_touches_no_data_file(monkeypatch):
    """A spec on data this machine lacks is read (a claim's config, ``--help``, another tier's
    report); only ``check_data``, which a run calls before training, says the files are missing."""
    monkeypatch.setenv("IMPLICITBIAS_SYSTEM_DATA", "0")
    spec = load_spec("fashion_mnist_cpu")
    assert {c["dataset"] for c in spec.configs} == {"fashion_mnist"}
    with pytest.raises(DataUnavailable, match="apt-get install dataset-fashion-mnist"):
        check_data(spec)


def test_bad_structure(tmp_path):
    with pytest.raises(ParameterError, match="spec section"):
        load_spec({"base": BASE, "grids": []})
    with pytest.raises(ParameterError, match="spec option"):
        load_spec({"base": BASE, "options": {"gpus": 2}})
    with pytest.raises(ParameterError, match="spec option threads"):
        load_spec({"base": BASE, "options": {"threads": "two"}})
    (tmp_path / "broken.toml").write_text("[base\nx = ")
    with pytest.raises(ParameterError, match="not valid TOML"):
        load_spec(tmp_path / "broken.toml")
    with pytest.raises(ParameterError, match="spec must be a TOML file or one of"):
        load_spec("no_such_spec")


def test_grid_expansion_and_deduplication():
    spec = load_spec({
        "base": {**BASE, "sigma_w": [0.5, 1.0, 2.0], "seed": [0, 1]},
        "grid": [{"label": "a", "optimizer": "sgd", "lr": [0.1, 0.01]}, {"label": "b", "optimizer": "adam", "lr": 1e-3},
                 {"label": "dup", "optimizer": "adam", "lr": 1e-3}],
    })
    assert len(spec.runs) == 3 * 2 * 2 + 3 * 2
    assert {label for label, _ in spec.runs} == {"a", "b"}
    assert {c["sigma_w"] for c in spec.configs} == {0.5, 1.0, 2.0}


def test_packaged_specs_are_valid():
    names = set(packaged_specs())
    assert {"tiny", "default", "fashion_mnist_cpu", "gpu_h200", "cifar10_paper"} <= names
    for name in ("tiny", "default"):
        assert load_spec(name).runs


def test_cli_bad_spec_is_one_line_and_runs_nothing(tmp_path, capsys):
    (tmp_path / "bad.toml").write_text(
        '[base]\ndataset = "synthetic"\ndata_size = 100\nwidth = 0.0625\nepochs = 1\nsigma_w = [1.0, 2.0]\n'
        '[[grid]]\noptimizer = "sgd"\nlr = 0.1\n[[grid]]\noptimizer = "adagrad"\nlr = 0.1\n'
    )
    store = tmp_path / "s.sqlite"
    assert main(["--store", str(store), "sweep", str(tmp_path / "bad.toml")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "optimizer must be one of" in err
    with Store(store) as s:
        assert s.counts("validation.run") == {}


@pytest.mark.parametrize("device", ["tpu:7", "meta", "cuda:99", "gpu", ""])
def test_bad_device_fails_at_load_and_before_any_run(store, device):
    from implicitbias.validation.sweep import run_sweep

    with pytest.raises(ParameterError, match="device"):
        load_spec({"base": {**BASE, "sigma_w": [1.0, 2.0]}, "options": {"device": device}})
    spec = load_spec({"base": {**BASE, "sigma_w": [1.0, 2.0]}})
    spec.options["device"] = device  # as the sweep command's --device sets it
    with pytest.raises(ParameterError, match="device"):
        run_sweep(spec, store, progress=False)
    assert store.counts("validation.run") == {}


@settings(max_examples=25, deadline=None)
@given(
    key=st.sampled_from(["sigma_w", "lr", "batch_size", "epochs", "width", "weight_decay"]),
    value=st.one_of(st.floats(max_value=0.0), st.just(float("inf")), st.text(max_size=3), st.integers(max_value=-1)),
)
def test_any_non_positive_or_non_numeric_entry_is_rejected(key, value):
    if key == "weight_decay" and isinstance(value, float) and value == 0.0:
        value = -1.0  # zero decay is allowed
    with pytest.raises(ParameterError, match=key):
        load_spec(_spec(**{key: value}))


@pytest.mark.parametrize(
    "grid, match",
    [
        ({"flip": "false"}, "flip must be a boolean"),
        ({"scale_head": "no"}, "scale_head must be a boolean"),
        ({"flip": 0}, "flip must be a boolean"),
        ({"epochs": True}, "epochs must be an integer"),
        ({"lr": [0.1, False]}, "lr must be a number"),
        ({"batch_size": "32"}, "batch_size must be an integer"),
        ({"optimizer": 5}, "optimizer must be a string"),
        ({"data_path": 5}, "data_path must be a string"),
        ({"label": 3}, "label must be a string"),
        ({"seed": 2**64}, "seed must be an integer in"),
        ({"seed": -1}, "seed must be an integer in"),
        ({"data_seed": 2**32}, "data_seed must be an integer in"),
    ],
)
def test_strict_toml_types(grid, match):
    """A string is not a boolean, a boolean is not a number: each is one error, never a silent cast."""
    with pytest.raises(ParameterError, match=match):
        load_spec(_spec(**grid))


@pytest.mark.parametrize(
    "text, match",
    [
        ("base = 5\n", "spec base must be a table"),
        ("options = 5\n", "spec options must be a table"),
        ("grid = 5\n", "spec grid must be a non-empty list of tables"),
        ("grid = []\n", "spec grid must be a non-empty list of tables"),
        ("name = 5\n", "spec name must be a string"),
        ('[base]\ndataset = "synthetic"\ndata_size = 100\ndata_path = 5\n', "data_path must be a string"),
        ('[options]\nthreads = true\n', "spec option threads must be an integer"),
        ('[options]\nbatched = "yes"\n', "spec option batched must be a boolean"),
    ],
)
def test_bad_spec_structure_is_one_error(tmp_path, text, match):
    path = tmp_path / "spec.toml"
    path.write_text(text)
    with pytest.raises(ParameterError, match=match) as info:
        load_spec(path)
    assert "\n" not in str(info.value)


def test_spec_path_that_is_a_folder_or_not_utf8(tmp_path):
    with pytest.raises(ParameterError, match="is a folder"):
        load_spec(tmp_path)
    (tmp_path / "latin1.toml").write_bytes(b'name = "caf\xe9"\n')
    with pytest.raises(ParameterError, match="is not UTF-8 text"):
        load_spec(tmp_path / "latin1.toml")


@pytest.mark.parametrize("content", [b"", b"not a tar archive at all", b"\x1f\x8b\x08garbage"])
def test_cifar10_path_that_is_not_an_archive(tmp_path, content):
    archive = tmp_path / "cifar-10-python.tar.gz"
    archive.write_bytes(content)
    with pytest.raises(ParameterError, match="not a readable tar archive"):
        check_data(load_spec(_spec(dataset="cifar10", data_path=str(archive))))
