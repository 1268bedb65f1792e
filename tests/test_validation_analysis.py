"""The claims table C1-C7 from hand-built run records with known spreads, norms and clocks."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.validation.analysis import claims, clock_fits, group_runs, history_prefix_spread
from implicitbias.validation.run import canonical_config

SIGMAS = [0.25, 1.0, 2.0]


def _record(test_accs, train_acc, sigma, norm_exponent, clocks, governing, epochs=4):
    """A run whose validation loss is lowest at the last epoch; test acc at epoch e is test_accs[e]."""
    history = [
        {"epoch": e, "train_acc": train_acc if e else 0.1, "val_loss": 2.0 - 0.1 * e, "val_acc": 0.5,
         "test_acc": test_accs[e], "kernel_norm": 10.0 * sigma ** (norm_exponent if e else 1.0)}
        for e in range(epochs + 1)
    ]
    summary = {"clocks": clocks, "governing_clock": governing, "final_train_acc": train_acc, "n_train": 100,
               "diverged_epoch": None, "initial_kernel_norm": 10.0 * sigma, "final_kernel_norm": history[-1]["kernel_norm"],
               "tau_interp": 1 if train_acc >= 0.995 else None}
    return {"status": "done", "summary": summary, "history": history}


def _group(label, optimizer, lr, finals, train_acc=1.0, wd=0.0, exponent=1.0, clock=None, batch=64, early=None):
    clocks = {"T_SGD": lr * lr, "T_L2": wd * lr * 100, "T_adapt": lr * 100}
    governing = "T_adapt" if optimizer == "adam" else "T_L2" if wd else "T_SGD"
    if clock is not None:
        clocks[governing] = clock
    runs = []
    for sigma, final in zip(SIGMAS, finals):
        config = canonical_config({"optimizer": optimizer, "lr": lr, "weight_decay": wd, "sigma_w": sigma,
                                   "epochs": 4, "batch_size": batch})
        accs = [0.1, 0.5, early if early is not None else final, final, final]
        runs.append((label, config, _record(accs, train_acc, sigma, exponent, clocks, governing)))
    return runs


@settings(max_examples=20, deadline=None)
@given(accs=st.lists(st.floats(0.1, 1.0), min_size=3, max_size=3))
def test_spread_is_max_minus_min_of_selected_accuracy(accs):
    (g,) = group_runs(_group("sgd", "sgd", 0.01, accs))
    assert g.spread_points == pytest.approx(100 * (max(accs) - min(accs)))
    assert g.summary["norm_slope"] == pytest.approx(1.0)


def test_claims_when_the_measurements_agree():
    runs = (_group("sgd", "sgd", 0.01, [0.9, 0.75, 0.6], clock=1e-4)
            + _group("adam", "adam", 0.001, [0.9, 0.89, 0.88], exponent=0.1, clock=1.0)
            + _group("l2", "sgd", 0.05, [0.9, 0.9, 0.89], wd=0.01, clock=0.5)
            + _group("sgd b", "sgd", 0.01, [0.9, 0.7, 0.5], batch=128, clock=5e-5))
    groups = group_runs(runs)
    verdicts = {r["claim"]: r["verdict"] for r in claims(groups)}
    assert verdicts == {"C1": "agrees", "C2": "agrees", "C3": "agrees", "C4": "agrees", "C5": "agrees",
                        "C6": "not run", "C7": "agrees"}
    assert clock_fits(groups)["governing"]["rho"] < 0


def test_claims_when_the_measurements_disagree_or_cannot_tell():
    runs = (_group("sgd", "sgd", 0.01, [0.9, 0.89, 0.88], early=0.5)  # small spread that shrank from 40 pts
            + _group("adam", "adam", 0.001, [0.9, 0.7, 0.5]))
    verdicts = {r["claim"]: r["verdict"] for r in claims(group_runs(runs))}
    assert verdicts["C1"] == "disagrees"
    assert verdicts["C3"] == "inconclusive"  # nothing to forget: low-lr SGD's spread is small
    assert verdicts["C4"] == verdicts["C5"] == "not run"
    not_interpolating = _group("sgd", "sgd", 0.01, [0.9, 0.7, 0.5], train_acc=0.9)
    assert {r["claim"]: r["verdict"] for r in claims(group_runs(not_interpolating))}["C1"] == "inconclusive"


def test_prefix_spread_uses_only_early_epochs():
    (g,) = group_runs(_group("sgd", "sgd", 0.01, [0.9, 0.89, 0.88], early=0.5))
    assert history_prefix_spread(g, 2) == pytest.approx(0.0)  # all runs have test acc `early` at epoch 2
    assert history_prefix_spread(g, 4) == pytest.approx(2.0)
