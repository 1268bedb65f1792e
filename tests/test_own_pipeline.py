"""Your own model and data set in a sweep (``arch = "module:factory"``, ``dataset = "module:loader"``,
``implicitbias.validation.external``): the runs go through the packaged specs' sweep path and are
analysed; sigma_w scales the factory's kernels; ensembles of a foreign module equal its solo runs;
editing the user's module recomputes its runs; every bad reference is one line naming the entry."""

import importlib
import math
import subprocess
import sys
import textwrap
import types

import own_pipeline
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

import implicitbias as ib
from implicitbias.cli import main
from implicitbias.theory import params
from implicitbias.validation import run as run_mod
from implicitbias.validation.analysis import summarise
from implicitbias.validation.data import DATASETS
from implicitbias.validation.models import ARCHITECTURES
from implicitbias.validation.sweep import check_data, load_spec, sweep_status

SIGMAS = [0.5, 2.0]
BASE = {
    "dataset": "own_pipeline:blobs",
    "arch": "own_pipeline:tiny_net",
    "width": 0.5,
    "batch_size": 27,  # 108 training images: 4 steps per epoch
    "epochs": 3,
    "sigma_w": SIGMAS,
    "seed": [0, 1],
    "optimizer": "sgd",
    "lr": 0.05,
}


def spec(**entries):
    return {"name": "own", "base": {**BASE, **entries}, "options": {"threads": 1}}


def test_sweep_of_own_model_and_loader_runs_and_is_analysed(tmp_path):
    path = tmp_path / "store.sqlite"
    run = ib.sweep(spec(), store=path)
    assert [r["status"] for r in run.records] == ["done"] * 4
    analysis = ib.analyse(spec(), store=path, out=tmp_path / "analysis")  # read back from the store
    (group,) = analysis.groups
    assert group.sigma_w == SIGMAS and group.seeds == [0, 1]
    spread = summarise(group).spread_selected
    assert math.isfinite(spread.estimate) and spread.estimate >= 0
    assert (group.setting["arch"], group.setting["dataset"]) == ("own_pipeline:tiny_net", "own_pipeline:blobs")
    assert "sgd lr 0.05, b 27, 3 ep" in analysis.markdown
    assert set(analysis.verdicts()) >= {"c1", "c7"}


def test_sigma_w_scales_every_kernel_of_the_factory_with_one_draw_per_seed():
    """Same seed, two sigma_w: every kernel norm at initialisation in the ratio 2.0 / 0.5 = 4 (the
    factory's own PyTorch init would give ratio 1), and ||W||_F near sigma_w sqrt(2 fan_out)."""
    spec_ = load_spec(spec())
    data = run_mod.dataset_for(spec_.configs[0])
    norms = {}
    for c in spec_.configs:
        model = run_mod.build(c, data, torch.device("cpu"), torch.float64)
        norms[c["sigma_w"], c["seed"]] = {n: float(m.weight.detach().norm()) for n, m in model.named_modules()
                                          if isinstance(m, torch.nn.Linear)}
    for seed in (0, 1):
        small, large = norms[0.5, seed], norms[2.0, seed]
        assert set(small) == {"hidden", "out"}
        for name in small:
            assert large[name] / small[name] == pytest.approx(4.0, rel=1e-9)
    assert norms[0.5, 0]["hidden"] != pytest.approx(norms[0.5, 1]["hidden"], rel=1e-6)  # the seed draws anew
    # hidden: 8 x 16 kernel, He variance 2/16: E||W||^2 = 8 x 16 x 2/16 = 16, so ||W|| near sigma_w x 4
    assert norms[2.0, 0]["hidden"] == pytest.approx(2.0 * 4.0, rel=0.35)


def test_what_the_factory_and_the_loader_draw_themselves_follows_the_seeds():
    """A parameter that is no kernel (left as the factory drew it) and data drawn from torch's global
    generator: the same seed gives the same values, another seed others, and the caller's generator
    state is left as it was."""
    config = run_mod.canonical_config({**BASE, "arch": "own_pipeline:shifted_net", "sigma_w": 1.0, "seed": 0})
    data = run_mod.dataset_for(config)
    state = torch.get_rng_state()

    def shift(seed):
        return run_mod.build({**config, "seed": seed}, data, torch.device("cpu"), torch.float32).shift.detach()

    assert torch.equal(shift(0), shift(0)) and not torch.equal(shift(0), shift(1))
    loaded = [run_mod.dataset_for({**config, "dataset": "own_pipeline:torch_blobs", "data_seed": s}).x_train
              for s in (0, 0, 1)]
    assert torch.equal(loaded[0], loaded[1]) and not torch.equal(loaded[0], loaded[2])
    assert torch.equal(torch.get_rng_state(), state)


def test_a_sweep_mixing_built_in_and_own_code_stores_each_run_under_its_own_code(store):
    built_in = run_mod.canonical_config({"dataset": "synthetic", "arch": "mlp"})
    own = run_mod.canonical_config({**BASE, "sigma_w": 1.0, "seed": 0})
    code = run_mod.run_codes(store)
    assert code(built_in) == store.code_of(run_mod.execute)  # the built-in runs' code as before
    assert code(own) != code(built_in)
    assert code(own) == store.code_of(run_mod.execute, modules=["own_pipeline"])


def test_the_loader_feeds_the_packaged_split_and_the_same_seed_the_same_data():
    data = run_mod.dataset_for(run_mod.canonical_config({**BASE, "sigma_w": 1.0, "seed": 0, "val_size": 20,
                                                         "train_size": 50, "test_size": 30}))
    assert (len(data.y_train), len(data.y_val), len(data.y_test), data.num_classes) == (50, 20, 30, 3)
    assert data.shape == own_pipeline.SHAPE
    assert abs(float(data.x_train.mean())) < 1e-5  # standardised with the training split's statistics
    x, y, *_ = own_pipeline.blobs(seed=0, size=None, path=None)
    x2, y2, *_ = own_pipeline.blobs(seed=0, size=None, path=None)
    assert (x == x2).all() and (y == y2).all()


@pytest.mark.parametrize("loader", ["own_pipeline:blobs_split", "own_pipeline:blobs_split_numpy"])
def test_a_loader_that_splits_itself_is_used_as_it_is(loader):
    c = run_mod.canonical_config({**BASE, "dataset": loader, "sigma_w": 1.0, "seed": 0})
    data = run_mod.dataset_for(c)
    assert (len(data.y_train), len(data.y_val), len(data.y_test)) == (80, 20, 60)
    assert data.x_train.dtype == torch.float32 and data.y_train.dtype == torch.int64
    x, *_ = own_pipeline.blobs(seed=0, size=None, path=None)
    assert torch.equal(data.x_train, torch.as_tensor(x[:80]))  # as the loader made it: not standardised again
    with pytest.raises(params.ParameterError, match=r"^val_size must stay unset"):
        run_mod.dataset_for({**c, "val_size": 10})


@pytest.mark.parametrize("arch", ["own_pipeline:tiny_net", "own_pipeline:tiny_sequential"])
def test_ensembles_of_a_factory_model_equal_its_solo_runs(tmp_path, arch):
    """vmap (a custom forward) and folded (an nn.Sequential) ensembles against solo runs, float64."""
    grid = spec(arch=arch, precision="float64", epochs=2)
    solo = ib.sweep(grid, store=tmp_path / "solo.sqlite")
    batched = ib.sweep({**grid, "options": {"threads": 1, "batched": True}}, store=tmp_path / "batched.sqlite")
    for a, b in zip(solo.records, batched.records, strict=True):
        for row_a, row_b in zip(a["history"], b["history"], strict=True):
            assert row_b["kernel_norm"] == pytest.approx(row_a["kernel_norm"], rel=1e-9)
            assert row_b["train_loss"] == pytest.approx(row_a["train_loss"], rel=1e-9)
            assert row_b["test_acc"] == row_a["test_acc"]


LAYERS = '''
HIDDEN = {hidden}
'''
MODELS = '''
"""A lab's model factory."""
import numpy as np
from torch import nn

from labpkg.layers import HIDDEN


def net(in_shape, num_classes, *, width):
    """Doc."""
    return nn.Sequential(nn.Flatten(), nn.Linear(int(np.prod(in_shape)), HIDDEN, bias=False),
                         nn.BatchNorm1d(HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, num_classes, bias=False))
'''


@pytest.fixture
def labpkg(tmp_path, monkeypatch):
    """A package ``labpkg`` of the user's (factory module + helper) that the test rewrites on disk."""
    root = tmp_path / "src"
    (root / "labpkg").mkdir(parents=True)
    (root / "labpkg" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(root))

    def write(models: str, hidden: int) -> None:
        (root / "labpkg" / "models.py").write_text(textwrap.dedent(models))
        (root / "labpkg" / "layers.py").write_text(LAYERS.format(hidden=hidden))
        for name in ("labpkg.models", "labpkg.layers"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()

    yield write
    for name in ("labpkg", "labpkg.models", "labpkg.layers"):
        sys.modules.pop(name, None)


def test_editing_the_users_module_recomputes_its_runs(tmp_path, labpkg):
    grid = spec(arch="labpkg.models:net", epochs=1, sigma_w=1.0, seed=[0, 1])
    path = tmp_path / "store.sqlite"
    labpkg(MODELS, 8)
    first = ib.sweep(grid, store=path)
    with ib.open_store(path) as store:
        assert sweep_status(load_spec(grid), store)["done"] == 2
        code = run_mod.run_codes(store)(load_spec(grid).configs[0])
        labpkg(MODELS.replace('"""Doc."""', '"""Reworded."""  # and a comment'), 8)
        assert run_mod.run_codes(store)(load_spec(grid).configs[0]) == code  # documentation only: kept
        labpkg(MODELS, 12)  # the helper of the factory's package changes
        assert sweep_status(load_spec(grid), store) == {"done": 0, "partial": 0, "missing": 2}
    second = ib.sweep(grid, store=path)
    assert [r["history"][0]["kernel_norms"]["1"] for r in first.records] != [
        r["history"][0]["kernel_norms"]["1"] for r in second.records
    ]
    assert ib.analyse(grid, store=path).groups[0].runs  # the new runs are the ones served


# -- bad references: one ParameterError, one line, naming the entry ------------------------------

BAD = [
    ({"arch": "own_pipeline:NOT_CALLABLE"}, "arch", "callable"),
    ({"arch": "own_pipeline:returns_a_list"}, "arch", "torch.nn.Module"),
    ({"arch": "own_pipeline:no_kernels"}, "arch", "conv or linear"),
    ({"arch": "own_pipeline:wrong_logits"}, "arch", r"\(2, 3\)"),
    ({"arch": "own_pipeline:positional_only"}, "arch", "in_shape, num_classes"),
    ({"arch": "own_pipeline:tiny_net", "head_depth": 2}, "head_depth", "stay unset"),
    ({"dataset": "own_pipeline:returns_a_string"}, "dataset", "x_train, y_train"),
    ({"dataset": "own_pipeline:flat_inputs"}, "dataset", "N x C x H x W"),
    ({"dataset": "own_pipeline:float_labels"}, "dataset", "integer"),
    ({"dataset": "own_pipeline:labels_beyond_classes"}, "dataset", r"one label in 0\.\.1"),
    ({"dataset": "own_pipeline:loader_without_keywords"}, "dataset", "seed, size, path"),
    ({"dataset": "own_pipeline:blobs", "val_size": 200}, "val_size", ""),
    ({"arch": "ib_absent_module.models:net"}, "arch", "importable"),
    ({"dataset": "own_pipeline:no_such_loader"}, "dataset", "no 'no_such_loader'"),
    ({"arch": "own_pipeline:tiny_net:x"}, "arch", "one colon"),
    ({"arch": "resnet7"}, "arch", "package.module:factory"),
]


@pytest.mark.parametrize("entries, name, what", BAD)
def test_bad_reference_is_one_line_naming_the_entry(entries, name, what):
    with pytest.raises(params.ParameterError, match=rf"^{name} must.*{what}") as info:
        check_data(load_spec(spec(**entries)))
    assert "\n" not in str(info.value)


BUILTIN = {*ARCHITECTURES, *DATASETS}
def test_a_module_without_a_source_file_is_refused(monkeypatch):
    """A factory defined interactively (a module with no .py file, as a notebook's __main__): its
    edits could not be fingerprinted, so stored runs could outlive them; one line says so."""
    module = types.ModuleType("ib_interactive")
    module.net = own_pipeline.tiny_net
    monkeypatch.setitem(sys.modules, "ib_interactive", module)
    with pytest.raises(params.ParameterError, match=r"^arch must name a module with a Python source file"):
        load_spec(spec(arch="ib_interactive:net"))


_identifiers = st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    st.one_of(
        st.text(max_size=30).filter(lambda s: ":" not in s and s not in BUILTIN),  # no colon, not a built-in name
        st.builds("ib_absent_{}.{}:{}".format, _identifiers, _identifiers, _identifiers),  # no such module
        _identifiers.filter(lambda s: not hasattr(own_pipeline, s)).map("own_pipeline:{}".format),  # no such name
        st.text(max_size=30).map("{}:".format),  # nothing after the colon
        st.text(max_size=30).map(":{}".format),  # nothing before it
    ),
    st.sampled_from(["arch", "dataset"]),
)
def test_any_bad_reference_is_one_line(reference, key):
    with pytest.raises(params.ParameterError, match=rf"^{key} must") as info:
        load_spec(spec(**{key: reference}))
    assert "\n" not in str(info.value)


def test_cli_bad_reference_exits_2_with_one_line(tmp_path):
    (tmp_path / "bad.toml").write_text('[base]\ndataset = "digits"\narch = "ib_absent_lab.models:net"\n')
    res = subprocess.run([sys.executable, "-m", "implicitbias", "sweep", "--dry-run", str(tmp_path / "bad.toml")],
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2
    (line,) = res.stderr.strip().splitlines()
    assert "arch must name a module importable" in line and "Traceback" not in res.stderr


@pytest.mark.parametrize("arch", ["own_pipeline:returns_a_list", "own_pipeline:wrong_logits"])
def test_cli_factory_of_the_wrong_type_exits_2_before_training(tmp_path, capsys, arch):
    toml = tmp_path / "own.toml"
    toml.write_text(f'[base]\ndataset = "own_pipeline:blobs"\narch = "{arch}"\nbatch_size = 27\n')
    assert main(["--store", str(tmp_path / "s.sqlite"), "sweep", str(toml), "--no-progress"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("implicitbias sweep: error: arch must")
    assert captured.out == ""  # refused by the checks before the sweep starts, nothing trained


# slow (18 s): the same sweep and analysis through the API is the first test of this module
@pytest.mark.slow
def test_cli_sweep_and_analyse_a_module_beside_the_spec(tmp_path):
    """A spec file names a module in its own folder: ``implicitbias sweep`` finds it (the spec's
    folder is importable), trains, and ``implicitbias analyse`` judges the runs, from another folder."""
    lab = tmp_path / "lab"
    lab.mkdir()
    (lab / "lab_models.py").write_text(textwrap.dedent(MODELS).replace("from labpkg.layers import HIDDEN", "HIDDEN = 8"))
    (lab / "lab_data.py").write_text(open(own_pipeline.__file__).read())
    (lab / "spec.toml").write_text(textwrap.dedent('''
        name = "lab"
        [base]
        dataset = "lab_data:blobs"
        arch = "lab_models:net"
        batch_size = 27
        epochs = 2
        sigma_w = [0.5, 2.0]
        seed = [0, 1]
        [options]
        threads = 1
        '''))
    store = str(tmp_path / "store.sqlite")
    for command in (["sweep", str(lab / "spec.toml"), "--no-progress"],
                    ["analyse", str(lab / "spec.toml"), "--out", str(tmp_path / "out")]):
        res = subprocess.run([sys.executable, "-m", "implicitbias", "--store", store, *command], capture_output=True,
                             text=True, timeout=300, cwd=tmp_path)
        assert res.returncode == 0, res.stderr
    assert "4 runs done (0 diverged)" in res.stdout or "sweep lab: 4 of 4 runs finished" in res.stdout
    assert (tmp_path / "out" / "analysis.md").is_file()
