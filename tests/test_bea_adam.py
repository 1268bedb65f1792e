"""Claim "BEA Adam": the engine's one-norm coefficient for eps -> 0, measured independently on
torch.optim.Adam's steps, against the published form as the reference notes quote it; and the
claim's verdict rule on synthetic evidence."""

import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.bea_adam import CLAIM, Config, measured_cell

DERIVED = "(beta_1 - beta_2)/(beta_1*beta_2 - beta_1 - beta_2 + 1)"  # b1/(1-b1) - b2/(1-b2)
QUOTED = "1/2 + beta_1/(1 - beta_1) - beta_2/(1 - beta_2)"


@pytest.mark.parametrize("b1, b2", [(0.5, 0.6), (0.0, 0.8), (0.7, 0.3)])
def test_torch_adam_steps_measure_the_one_norm_coefficient(b1, b2):
    """One step of torch's Adam after its moments settle: c = b1/(1-b1) - b2/(1-b2) (derived by hand from
    m = g + h g' b1/(1-b1), sqrt(v) = g + h g' b2/(1-b2) along theta' = theta - h), at generic betas."""
    rec = measured_cell({"beta1": b1, "beta2": b2, "h": 1e-3, "burn_in": 400})
    assert rec["c"] == pytest.approx(b1 / (1 - b1) - b2 / (1 - b2), abs=2e-3)
    assert abs(rec["c"] - rec["c_half"]) < abs(rec["c"] - rec["c_h"])  # Richardson improved on c(h/2)


def _evidence(derived=DERIVED, measured_shift=0.0):
    rows = [{"beta1": b1, "beta2": b2, "h": 1e-3, "burn_in": 400, "c_h": 0.0, "c_half": 0.0,
             "c": b1 / (1 - b1) - b2 / (1 - b2) + measured_shift} for b1, b2 in ((0.5, 0.6), (0.6, 0.9))]
    return Evidence("synthetic", {"derived": derived, "measured": rows})


SYNTHETIC_VERDICTS = [
    ("agrees", Evidence("synthetic", {"derived": QUOTED, "measured": [
        {"beta1": 0.5, "beta2": 0.6, "h": 1e-3, "burn_in": 400, "c_h": 0.0, "c_half": 0.0, "c": 0.0}]})),
    ("disagrees", _evidence()),  # derived and measured agree with each other, not with the quoted form
    ("inconclusive", _evidence(measured_shift=0.5)),  # the iterates do not follow the derived flow
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


def test_disagreement_names_the_difference_and_the_sign():
    v = CLAIM.judge(_evidence())
    assert v.numbers["difference"] == "1/2"
    assert "anti-penalised" in v.reason
    assert v.numbers["c_default"] == pytest.approx(9 - 999) and v.numbers["published_default"] == pytest.approx(-989.5)


def test_claim_end_to_end(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(betas=((0.5, 0.6),)))
    v = CLAIM.judge(ev)
    assert v.verdict == "disagrees" and v.numbers["route_gap"] < 1e-4, v
    assert "published c" in CLAIM.render(ctx, ev, v)
