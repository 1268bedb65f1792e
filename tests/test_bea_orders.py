"""Claim "BEA orders": global error of the iterates O(h) against f_0 and O(h^2) against the derived
modified flow, and the claim's verdict rule on synthetic evidence."""

import pytest

from implicitbias.claims import Context, Evidence, typed
from implicitbias.claims.forgetting.bea_orders import CLAIM, Config, Measured
from implicitbias.numerics.optim.order_of_accuracy import OrderResult


def _row(optimizer, s1=1.02, s2=1.98, floor=1e-6):
    return {"optimizer": optimizer, "loss": "quadratic", "steps": [0.02, 0.01], "error_gradient_flow": [1e-2, 5e-3],
            "error_modified_flow": [4 * floor, floor], "slope_gradient_flow": s1, "slope_modified_flow": s2}


def _evidence(**adam):
    return Evidence("synthetic", Measured(("gd", "adam"), typed(OrderResult, [_row("gd"), _row("adam", **adam), _row("muon", s2=3.0)])))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),  # muon's slope 3 is shown, not judged
    ("disagrees", _evidence(s2=1.0)),  # the modified flow is no better than gradient flow
    ("disagrees", _evidence(s1=1.5)),
    ("inconclusive", _evidence(floor=1e-13)),  # errors at the integrator's floor
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("f, expected", [(1 / 1.1, "agrees"), (1.1, "disagrees")])
@pytest.mark.parametrize("side", [1, -1])
def test_the_slope_bound_is_0_2_a_slope_10_percent_either_side_decides(f, expected, side):
    """The bound moved by 20% (0.16 or 0.24) flips one of these: either slope 0.2 f above or below 1 or 2."""
    assert CLAIM.threshold("slope") == 0.2
    assert CLAIM.judge(_evidence(s1=1 + side * 0.2 * f)).verdict == expected
    assert CLAIM.judge(_evidence(s2=2 + side * 0.2 * f)).verdict == expected


@pytest.mark.parametrize("f, expected", [(1.1, "agrees"), (1.0, "agrees"), (1 / 1.1, "inconclusive")])
def test_the_error_floor_is_1e_10_an_error_10_percent_either_side_decides(f, expected):
    """An error at the floor exactly is above it (strictly below is the integrator's)."""
    assert CLAIM.threshold("error_floor") == 1e-10
    assert CLAIM.judge(_evidence(floor=1e-10 * f)).verdict == expected



def test_claim_end_to_end(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(judged=("gd",), shown=(), losses=("quartic",)))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert "quartic" in CLAIM.render(ctx, ev, v)
