"""Claim "BEA SGD": the engine's random-reshuffling coefficients against Smith et al.'s
(1/4, (N - b)/(4 b (N - 1))), and the claim's verdict rule on synthetic evidence."""

import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.forgetting.bea_sgd import CLAIM, Case, Config, Measured, published


def _evidence(c_46="1/12"):
    return Evidence("synthetic", Measured((Case(4, 2, "1/4", "1/12"), Case(6, 3, "1/4", c_46))))


SYNTHETIC_VERDICTS = [
    ("agrees", Evidence("synthetic", Measured((Case(6, 2, "1/4", "1/10"),)))),
    ("disagrees", _evidence(c_46="1/12")),  # (6, 3) needs 1/20: 1/12 is the (4, 2) value
    ("disagrees", Evidence("synthetic", Measured((Case(6, 2, "1/2", "1/10"),)))),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_published_form_at_generic_points():
    assert [str(x) for x in published(6, 2)] == ["1/4", "1/10"]
    assert [str(x) for x in published(8, 2)] == ["1/4", "3/28"]


def test_claim_end_to_end(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(cases=((4, 2), (6, 3))))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees", v
    assert "1/20" in CLAIM.render(ctx, ev, v)
