"""The claims layer as a whole: every claim is complete (statement, source, section, typed configs,
justified thresholds) and every verdict it can give is exercised by its own test module.

Convention checked here: the claim defined in ``implicitbias/claims/<name>.py`` is tested in
``tests/test_<name>.py``, which defines ``SYNTHETIC_VERDICTS``, a list of (expected verdict,
Evidence) pairs run through the claim's ``judge`` there (parametrised ``test_verdict``).  This test
fails when a claim has no such module, when the list misses an outcome the claim declares, when a
declared outcome list cannot disagree, or when a threshold has no justification or is never read
by the rule.
"""

import dataclasses
import importlib
import inspect
import math
import sys
from pathlib import Path

import pytest

from implicitbias.claims import VERDICTS, Claim, Threshold, registry
from implicitbias.report import available_sections

CLAIMS = registry()
TESTS = Path(__file__).parent


def _module_name(claim: Claim) -> str:
    return type(claim).__module__.rsplit(".", 1)[-1]


def test_registry_holds_the_claims_of_every_section():
    sections = {c.section for c in CLAIMS.values()}
    assert {"dynamics", "flows", "head_rank"} <= sections
    assert {"Theorem 4.4", "BEA Adam", "Sec. 5 (accuracy)"} <= set(CLAIMS)


@pytest.mark.parametrize("claim", CLAIMS.values(), ids=list(CLAIMS))
def test_claim_is_complete(claim):
    for attr in ("id", "statement", "source", "section"):
        assert isinstance(getattr(claim, attr), str) and getattr(claim, attr).strip(), attr
    assert claim.section in available_sections(), f"{claim.id}: no report section named {claim.section!r}"
    assert set(claim.outcomes) <= set(VERDICTS)
    assert {"agrees", "disagrees"} <= set(claim.outcomes), f"{claim.id}: a rule that cannot disagree is a bug"
    assert "default" in claim.configs
    for tier, config in claim.configs.items():
        assert dataclasses.is_dataclass(config) and type(config).__dataclass_params__.frozen, (claim.id, tier)


@pytest.mark.parametrize("claim", CLAIMS.values(), ids=list(CLAIMS))
def test_thresholds_are_named_justified_and_read_by_the_rule(claim):
    # the modules of the claim's class and of the classes it inherits its judge from (C4 uses C3's rule)
    rule = "".join({inspect.getsource(sys.modules[k.__module__]) for k in type(claim).__mro__
                    if k.__module__.startswith("implicitbias.claims.")})
    for name, threshold in claim.thresholds.items():
        assert isinstance(threshold, Threshold), name
        assert math.isfinite(float(threshold)), name
        assert len(threshold.why.split()) >= 4, f"{claim.id}: threshold {name} needs a one-line justification"
        assert rule.count(f'"{name}"') >= 2, f"{claim.id}: threshold {name} is never read by its rule"


@pytest.mark.parametrize("claim", CLAIMS.values(), ids=list(CLAIMS))
def test_every_outcome_is_tested_on_synthetic_evidence(claim):
    name = _module_name(claim)
    path = TESTS / f"test_{name}.py"
    assert path.exists(), f"{claim.id}: no test module tests/test_{name}.py"
    module = importlib.import_module(f"test_{name}")
    cases = getattr(module, "SYNTHETIC_VERDICTS", None)
    assert cases, f"{claim.id}: tests/test_{name}.py defines no SYNTHETIC_VERDICTS"
    assert {expected for expected, _ in cases} >= set(claim.outcomes), (
        f"{claim.id}: outcomes {sorted(set(claim.outcomes) - {e for e, _ in cases})} are never exercised")
    for expected, evidence in cases:
        assert claim.judge(evidence).verdict == expected, (claim.id, expected)


@pytest.mark.parametrize("name", list(available_sections()))
def test_sections_are_layout_only(name):
    section = available_sections()[name]
    assert not hasattr(section, "build")
    assert {"NAME", "ORDER", "TITLE"} <= set(vars(section))
