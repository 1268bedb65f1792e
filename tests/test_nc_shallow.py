"""L = 1: NC is the global optimum of the shallow UFM (the convex nuclear-norm problem P(K, 1)).

Routes: the exact dual bound of uniform multipliers, cvxpy's optimum with its own dual bound, and
the non-convex search at p = 1; then the claim's verdict rule on synthetic evidence for each
outcome.  L counts weight matrices (N = L + 1 = 2, p = 1).
"""

import pytest

from implicitbias.claims import Context, Evidence
from implicitbias.claims.depth.nc_shallow import CLAIM, Config, Measured, ShallowCell, shallow_cell


@pytest.mark.parametrize("K, search", [(3, False), (5, True)])
def test_shallow_cell_routes_agree_on_k_minus_1(K, search):
    rec = shallow_cell({"K": K, "search": search, "effort": 1})
    assert rec["uniform_bound"] == pytest.approx(K - 1, rel=1e-12)
    assert rec["cvxpy_status"] == "optimal"
    assert rec["cvxpy_value"] == pytest.approx(K - 1, rel=1e-7)
    assert rec["cvxpy_bound"] == pytest.approx(K - 1, rel=1e-7)
    if search:
        assert rec["search_value"] >= (K - 1) * (1 - 1e-9)


def _cell(K=4, cvx=None, bound=None, status="optimal", found=None, uniform=None):
    return ShallowCell(K=K, uniform_bound=K - 1.0 if uniform is None else uniform,
                       cvxpy_value=K - 1.0 if cvx is None else cvx, cvxpy_bound=K - 1.0 if bound is None else bound,
                       cvxpy_status=status, cvxpy_verified=K - 1.0 if cvx is None else cvx, search_value=found)


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule
    ("agrees", Evidence("s", Measured((_cell(), _cell(K=5, found=4.0))))),
    ("disagrees", Evidence("s", Measured((_cell(), _cell(K=5, found=3.9))))),
    ("disagrees", Evidence("s", Measured((_cell(), _cell(K=5, cvx=3.5))))),
    ("disagrees", Evidence("s", Measured((_cell(), _cell(K=5, bound=3.0, uniform=3.0))))),
    ("inconclusive", Evidence("s", Measured((_cell(), _cell(K=5, status="optimal_inaccurate"))))),
]


@pytest.mark.parametrize("expected, evidence", SYNTHETIC_VERDICTS)
def test_verdict(expected, evidence):
    """Every outcome of the rule, each case with one condition failing (the claim's own test module)."""
    assert CLAIM.judge(evidence).verdict == expected


@pytest.mark.parametrize("field", ["cvx", "found"])
@pytest.mark.parametrize("below, expected", [(0.9e-6, "agrees"), (1.1e-6, "disagrees")])
def test_the_tolerance_is_1e_6_relative_a_value_10_percent_either_side_decides(field, below, expected):
    """The bound moved by 20% (0.8e-6 or 1.2e-6) flips one of these: the solver's or the search's value
    a relative 0.9e-6 or 1.1e-6 below K - 1 = 4 (the certificates at K - 1)."""
    assert CLAIM.threshold("tolerance") == 1e-6
    cell = _cell(K=5, bound=4.0, **{field: 4.0 * (1 - below)})
    assert CLAIM.judge(Evidence("s", Measured((_cell(), cell)))).verdict == expected


@pytest.mark.parametrize("uniform, bound, expected", [(4.0, 3.0, "agrees"), (3.0, 4.0, "agrees"),
                                                      (4.0 * (1 - 1.1e-6), 3.0, "disagrees"),
                                                      (3.0, 4.0 * (1 - 0.9e-6), "agrees")])
def test_one_certificate_reaching_k_minus_1_is_enough(uniform, bound, expected):
    """The uniform dual bound or cvxpy's: the better of the two must reach K - 1 = 4 within the tolerance."""
    cell = _cell(K=5, uniform=uniform, bound=bound)
    assert CLAIM.judge(Evidence("s", Measured((_cell(), cell)))).verdict == expected


def test_claim_end_to_end(store, tmp_path):
    ctx = Context(store=store, out=tmp_path, progress=False)
    ev = CLAIM.measure(ctx, Config(Ks=(2, 3, 4), search_Ks=(4,), effort=1))
    v = CLAIM.judge(ev)
    assert v.verdict == "agrees" and "K - 1" in v.measured
    assert "cvxpy" in CLAIM.render(ctx, ev, v)


def test_a_value_or_certificate_at_the_tolerance_exactly_counts_as_k_minus_1():
    edge = 4.0 * (1 - 1e-6)  # the rule's own bound for K = 5, the same float
    for cell in (_cell(K=5, cvx=edge, bound=4.0), _cell(K=5, uniform=edge, bound=edge)):
        assert CLAIM.judge(Evidence("s", Measured((_cell(), cell)))).verdict == "agrees"


def test_worst_is_the_largest_relative_distance_of_cvxpy_from_k_minus_1():
    v = CLAIM.judge(Evidence("s", Measured((_cell(), _cell(K=5, cvx=4.0 * (1 + 3e-7))))))
    assert v.numbers["worst"] == pytest.approx(3e-7, rel=1e-6)
