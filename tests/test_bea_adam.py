"""Claim "BEA Adam": the engine's one-norm coefficient for eps -> 0, measured independently on
torch.optim.Adam's steps, the paper's sign rule (anti-penalised exactly when beta_2 > beta_1), and
the claim's verdict rule on synthetic evidence."""

from dataclasses import replace

import pytest

from implicitbias.claims import Context, Evidence, typed
from implicitbias.claims.forgetting.bea_adam import CLAIM, Config, Measured, Step, measured_cell

DERIVED = "(beta_1 - beta_2)/(beta_1*beta_2 - beta_1 - beta_2 + 1)"  # b1/(1-b1) - b2/(1-b2)
QUOTED = "1/2 + beta_1/(1 - beta_1) - beta_2/(1 - beta_2)"


@pytest.mark.parametrize("b1, b2", [(0.5, 0.6), (0.0, 0.8), (0.7, 0.3)])
def test_torch_adam_steps_measure_the_one_norm_coefficient(b1, b2):
    """One step of torch's Adam after its moments settle: c = b1/(1-b1) - b2/(1-b2) (derived by hand from
    m = g + h g' b1/(1-b1), sqrt(v) = g + h g' b2/(1-b2) along theta' = theta - h), at generic betas."""
    rec = measured_cell({"beta1": b1, "beta2": b2, "h": 1e-3, "burn_in": 400})
    assert rec["c"] == pytest.approx(b1 / (1 - b1) - b2 / (1 - b2), abs=2e-3)
    assert abs(rec["c"] - rec["c_half"]) < abs(rec["c"] - rec["c_h"])  # Richardson improved on c(h/2)


GRID = Config().sign_grid


def _evidence(derived=DERIVED, measured=lambda b1, b2: b1 / (1 - b1) - b2 / (1 - b2), shift=0.0):
    rows = [{"beta1": b1, "beta2": b2, "h": 1e-3, "burn_in": 400, "c_h": 0.0, "c_half": 0.0,
             "c": measured(b1, b2) + shift} for b1, b2 in ((0.5, 0.6), (0.6, 0.9))]
    return Evidence("synthetic", Measured(derived, typed(Step, rows), GRID))


SYNTHETIC_VERDICTS = [
    ("agrees", _evidence()),
    # a coefficient that both routes share but whose sign change is off the diagonal (the notes' recollection)
    ("disagrees", _evidence(QUOTED, measured=lambda b1, b2: 0.5 + b1 / (1 - b1) - b2 / (1 - b2))),
    ("inconclusive", _evidence(shift=0.5)),  # the iterates do not follow the derived flow
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("f, expected", [(1 / 1.1, "agrees"), (1.1, "inconclusive")])
def test_the_routes_agree_to_1e_3_a_gap_10_percent_either_side_decides(f, expected):
    """The bound moved by 20% (0.8e-3 or 1.2e-3) flips one of these: torch's c off by 1e-3 f where
    |c| = 0.5 < 1 (an absolute gap), and by the same where |c| = 7.5 (a relative gap 7.5 times smaller)."""
    assert CLAIM.threshold("routes_agree") == 1e-3
    assert CLAIM.judge(_evidence(shift=1e-3 * f)).verdict == expected




def test_a_gap_at_the_bound_exactly_still_agrees():
    """At beta_1 = beta_2 the derived c is 0 exactly; torch's c = 1e-3 there is a gap of 1e-3 exactly."""
    ev = _evidence()
    first = ev.data.measured[0]
    for c, expected in ((1e-3, "agrees"), (1.1e-3, "inconclusive")):
        at_diagonal = replace(first, beta1=0.5, beta2=0.5, c=c)
        assert CLAIM.judge(Evidence("synthetic", replace(ev.data, measured=(*ev.data.measured, at_diagonal)))).verdict == expected


def test_disagreement_names_where_the_sign_rule_fails():
    v = CLAIM.judge(_evidence(QUOTED, measured=lambda b1, b2: 0.5 + b1 / (1 - b1) - b2 / (1 - b2)))
    assert ["1/2", "3/5"] in v.numbers["sign_rule_fails_at"] and ["0", "0"] in v.numbers["sign_rule_fails_at"]
    assert ["9/10", "999/1000"] not in v.numbers["sign_rule_fails_at"]  # both forms are negative at the defaults


def test_agreement_reports_the_default_coefficient():
    v = CLAIM.judge(_evidence())
    assert v.numbers["c_default"] == pytest.approx(9 - 999) and v.numbers["sign_rule_fails_at"] == []


def test_claim_end_to_end(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(betas=((0.5, 0.6),)))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees" and v.numbers["route_gap"] < 1e-4, v
    assert "notes' recalled c" in CLAIM.render(ctx, ev, v)
