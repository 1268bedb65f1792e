"""Every threshold the documentation states has a test on each side of it (issue 31), so moving
it fails a test: the divergence rule (training loss above 10x its start; training accuracy within
2 points of chance after a warm-up of max(5, 25% of the epochs)), the caps on inputs (1e8 steps,
100,000 runs per spec, learning rates and decays up to 1e100, 100,000 classes from a loader, K <= 512
for ``dynamics``, store paths of at most 504 bytes: ``tests/test_store_paths.py``), the free space
an output needs (1 MiB), a lease's lifetime (60 s) and NC1's pseudo-inverse cut-off (eigenvalues
below 1e-12 of the largest).  The values are written here as the documentation states them, never
read from the package, so a copy of the package with one of them moved fails here
(``benchmarks/mutate_documented_bounds.py`` moves each by 100x either way and counts the failures).
"""

import socket
import time
import types

import numpy as np
import pytest

from implicitbias.cli import main
from implicitbias.commands import check_free_space
from implicitbias.numerics.metrics.nc_metrics import nc_metrics
from implicitbias.store import Store
from implicitbias.theory.clocks import forgetting_clocks, total_steps
from implicitbias.theory.params import ParameterError
from implicitbias.validation import external
from implicitbias.validation import run as run_mod
from implicitbias.validation.sweep import load_spec

# -- the divergence rule ---------------------------------------------------------------------------


def _row(train_loss=1.0, train_acc=0.9):
    return {"train_loss": train_loss, "val_loss": 1.0, "test_loss": 1.0, "kernel_norm": 1.0, "train_acc": train_acc}


@pytest.mark.parametrize("ratio, diverged", [(10.01, True), (9.99, False)])
def test_a_training_loss_above_10x_its_start_diverges(ratio, diverged):
    why = run_mod.divergence(_row(train_loss=2.0 * ratio), initial_loss=2.0, num_classes=10, epoch=1, warmup=5)
    assert (why is not None) == diverged
    assert why is None or "> 10 x" in why


@pytest.mark.parametrize("accuracy, diverged", [(0.1 + 0.0199, True), (0.1 + 0.0201, False)])
def test_training_accuracy_within_2_points_of_chance_after_warm_up_diverges(accuracy, diverged):
    why = run_mod.divergence(_row(train_acc=accuracy), initial_loss=1.0, num_classes=10, epoch=6, warmup=5)
    assert (why is not None) == diverged


@pytest.mark.parametrize("epoch, diverged", [(5, False), (6, True)])
def test_the_chance_rule_waits_for_the_warm_up(epoch, diverged):
    why = run_mod.divergence(_row(train_acc=0.1), initial_loss=1.0, num_classes=10, epoch=epoch, warmup=5)
    assert (why is not None) == diverged


@pytest.mark.parametrize("epochs, warmup", [(1, 5), (4, 5), (20, 5), (21, 6), (40, 10), (100, 25), (1000, 250)])
def test_the_warm_up_is_max_of_5_and_25_percent_of_the_epochs(epochs, warmup):
    assert run_mod.warmup_epochs(epochs) == warmup


# -- caps on inputs ---------------------------------------------------------------------------------

def test_a_run_of_1e8_steps_is_allowed_and_one_more_epoch_is_not():
    assert total_steps(10**4, 1, 10**4) == 10**8
    with pytest.raises(ParameterError, match=r"^epochs must give at most 1e\+08 steps"):
        total_steps(10**4, 1, 10**4 + 1)


@pytest.mark.parametrize("key", ["lr", "weight_decay"])
def test_rates_up_to_1e100_are_allowed_and_above_are_not(key):
    arg = {"lr": "lr_schedule"}.get(key, key)
    rates = {"lr_schedule": 0.1, "weight_decay": 0.0}
    clocks = forgetting_clocks("sgd", batch_size=1, n_train=1, epochs=1, **{**rates, arg: 1e100}).total
    assert all(np.isfinite(list(clocks.values())))
    with pytest.raises(ParameterError, match=rf"^{key} must be a finite number .*<= 1e\+100"):
        forgetting_clocks("sgd", batch_size=1, n_train=1, epochs=1, **{**rates, arg: 1.000001e100})


@pytest.fixture
def cheap_configs(monkeypatch):
    """Expanding a spec canonicalises every run; here a copy stands in, so a spec of 100,000 runs expands fast."""
    monkeypatch.setattr(run_mod, "canonical_config", dict)


def test_a_spec_of_100000_runs_is_allowed(cheap_configs):
    assert len(load_spec({"base": {"dataset": "synthetic", "seed": list(range(100_000))}}).runs) == 100_000


def test_a_spec_of_100001_runs_is_refused_before_it_is_expanded(cheap_configs):
    with pytest.raises(ParameterError, match=r"^spec must expand to at most 100000 runs"):
        load_spec({"base": {"dataset": "synthetic", "seed": list(range(100_001))}})


def test_a_loader_may_give_100000_classes_and_no_more():
    assert external.load_data("faulty_pipeline:many_classes", seed=0).num_classes == 100_000
    with pytest.raises(ParameterError, match=r"^dataset must return labels of 2 to 100000 classes"):
        external.load_data("faulty_pipeline:too_many_classes", seed=0)


@pytest.mark.parametrize("K, refused", [(512, "L"), (1024, "K")])
def test_dynamics_takes_k_up_to_512(capsys, K, refused):
    """K = 512 passes its check (the next option, a bad L, is what is refused); 1024 does not."""
    assert main(["dynamics", "trajectory", "--K", str(K), "--L", "x"]) == 2
    assert f"error: --{refused} must" in capsys.readouterr().err


@pytest.mark.parametrize("free, refused", [(1 << 20, False), ((1 << 20) - 1, True)])
def test_an_output_needs_1_mib_free(tmp_path, monkeypatch, free, refused):
    monkeypatch.setattr("os.statvfs", lambda path: types.SimpleNamespace(f_bavail=free, f_frsize=1))
    if refused:
        with pytest.raises(ParameterError, match="filesystem is full"):
            check_free_space("out", tmp_path / "out", tmp_path)
    else:
        check_free_space("out", tmp_path / "out", tmp_path)


# -- leases and tolerances --------------------------------------------------------------------------

@pytest.mark.parametrize("age, alive", [(59.0, True), (61.0, False)])
def test_a_lease_lives_60_s_without_a_heartbeat(tmp_path, age, alive):
    now = time.time()
    with Store(tmp_path / "s.sqlite") as store:
        assert store._alive(f"{socket.gethostname()}-elsewhere|1|0|token", now - age, now) == alive


@pytest.mark.parametrize("ratio, kept", [(1e-11, True), (1e-13, False)])
def test_nc1_drops_between_class_directions_below_1e_12_of_the_largest(ratio, kept):
    """Three classes in the plane whose between-class covariance has eigenvalues 2/3 and 2/3 x ratio,
    each class four samples at +-w along both axes (within-class covariance w^2 / 2 x identity):
    NC1 = trace(Sigma_W Sigma_B^+) / K, Sigma_B^+ over the kept eigenvalues."""
    e, w = np.sqrt(3 * ratio), 0.5
    means = np.array([[1.0, 0.0], [-1.0, 0.0], [0.0, e]])
    offsets = np.array([[w, 0.0], [-w, 0.0], [0.0, w], [0.0, -w]])
    H = np.concatenate([m + offsets for m in means])
    y = np.repeat(np.arange(3), 4)
    lam = np.array([2 / 3, 2 / 3 * ratio])
    expected = (w**2 / 2) * (1 / lam[0] + (1 / lam[1] if kept else 0.0)) / 3
    assert nc_metrics(H, y, means - means.mean(axis=0)).nc1 == pytest.approx(expected, rel=1e-6)
