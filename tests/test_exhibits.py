"""The exhibits of the claims layer that no claim's test covers: what the flows section shows.

The example runs' clocks are compared with the clock formulas written out here (constant rate eta,
ceil(N / b) steps per epoch, k steps in all): T_SGD = k eta^2 / b, T_adapt = k eta, T_L2 = lambda k eta
(Spec B s. 3), so a setting passed to the clocks in the wrong order is caught.  The derived flows are
one per built-in update the section lists, cached in the store.
"""

import math

import pytest

from implicitbias.claims import Context
from implicitbias.claims.forgetting.modified_flows import EXAMPLE_RUNS, KIND, derived_flows, example_clocks


def test_example_clocks_follow_the_formulas():
    runs = example_clocks()
    assert [r.label for r in runs] == [e[0] for e in EXAMPLE_RUNS]
    for run, (_, optimizer, lr, b, n, epochs, lam) in zip(runs, EXAMPLE_RUNS):
        k = epochs * math.ceil(n / b)
        assert (run.optimizer, run.lr, run.batch_size, run.epochs, run.weight_decay) == (optimizer, lr, b, epochs, lam)
        assert run.clocks["T_SGD"] == pytest.approx(k * lr**2 / b, rel=1e-9)
        assert run.clocks["T_adapt"] == pytest.approx(k * lr, rel=1e-9)
        assert run.clocks["T_L2"] == pytest.approx(lam * k * lr, rel=1e-9, abs=1e-12)
    assert {r.label: r.governing for r in runs}["CIFAR-10 Adam"] == "T_adapt"


def test_derived_flows_are_the_sections_and_cached(store):
    ctx = Context(store, progress=False)
    flows = derived_flows(ctx)
    assert (flows[-2].optimizer, flows[-2].minibatches) == ("sgd", 2) and (flows[-1].optimizer, flows[-1].order) == ("gd", 2)
    assert all(f.tex.strip() and f.description for f in flows)
    assert store.counts(KIND) == {"done": len(flows)}
    assert derived_flows(ctx) == flows  # served from the store: the same records, derivation seconds included
