"""Claim "BEA heavy ball": the engine's effective step and regulariser ratio against Ghosh et al.'s
1/(1 - beta) and (1 + beta)/(1 - beta), and the claim's verdict rule on synthetic evidence."""

import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.forgetting.bea_heavy_ball import CLAIM, Config, Measured


def _evidence(a="-1/(beta - 1)", ratio="-(beta + 1)/(beta - 1)"):
    return Evidence("synthetic", Measured(a, "unused", ratio))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    ("agrees", _evidence(a="1/(1 - beta)", ratio="(1 + beta)/(1 - beta)")),
    ("disagrees", _evidence(ratio="1/(1 - beta)")),  # GD's regulariser at the effective step
    ("disagrees", _evidence(a="1")),  # no momentum speed-up
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_claim_end_to_end(store, tmp_path):
    v = CLAIM.judge(CLAIM.measure(Context(store=store, out=tmp_path, progress=False), Config()))
    assert v.verdict == "agrees", v
