"""Claim "BEA GD": the engine's coefficient of h |grad L|^2 against Barrett & Dherin's 1/4, and the
claim's verdict rule on synthetic evidence."""

import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.forgetting.bea_gd import CLAIM, Config, Measured

SYNTHETIC_VERDICTS = [
    ("agrees", Evidence("synthetic", Measured("1/4"))),
    ("agrees", Evidence("synthetic", Measured("2/8"))),
    ("disagrees", Evidence("synthetic", Measured("1/2"))),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_claim_end_to_end(store, tmp_path):
    v = CLAIM.judge(CLAIM.measure(Context(store=store, out=tmp_path, progress=False), Config()))
    assert v.verdict == "agrees" and v.measured == "c = 1/4"
