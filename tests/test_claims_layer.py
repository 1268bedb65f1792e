"""The claims layer as a whole: every claim is complete (statement, source, section, typed configs,
justified thresholds) and every verdict it can give is exercised by its own test module.

Convention checked here: the claim defined in ``implicitbias/claims/<paper>/<name>.py`` is tested in
``tests/test_<name>.py``, which defines ``SYNTHETIC_VERDICTS``, a list of (expected verdict,
Evidence) pairs run through the claim's ``judge`` there (parametrised ``test_verdict``).  This test
fails when a claim has no such module, when the list misses an outcome the claim declares, when a
declared outcome list cannot disagree, or when a threshold has no justification or is never read
by the rule.  Report sections are layout only: their source imports and calls nothing that
computes (the claims layer computes what they show).
"""

import ast
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


def test_registry_finds_every_claim_module_in_the_papers_subpackages():
    import implicitbias.claims

    root = Path(implicitbias.claims.__file__).parent
    defining = {".".join(("implicitbias", *p.relative_to(root.parent).with_suffix("").parts))
                for p in root.rglob("*.py") if "\nCLAIM = " in p.read_text()}
    assert {type(c).__module__ for c in CLAIMS.values()} == defining
    assert {m.split(".")[2] for m in defining} == {"depth", "forgetting"}  # grouped by paper


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


# what a section may import: the claims layer (which computes), layout helpers, the report, the standard library
LAYOUT_IMPORTS = ("implicitbias.claims", "implicitbias.atlas", "implicitbias.figures", "implicitbias.report")
# names whose call computes: the store's and a context's map, a claim's measure, training and solving
COMPUTING_CALLS = {"map", "measure", "evaluate", "measure_groups", "train_ensembles", "phase_diagram", "execute"}
COMPUTING_ATTRIBUTES = {"store", "executor"}  # a context's plumbing


def computing_uses(source: str) -> list[str]:
    """What in a section's ``source`` computes (imports outside ``LAYOUT_IMPORTS`` and the standard
    library, calls of ``COMPUTING_CALLS``, reads of ``COMPUTING_ATTRIBUTES``), lazy imports included."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            for name in names:
                root = name.split(".")[0]
                layout = any(name == m or name.startswith(m + ".") for m in LAYOUT_IMPORTS)
                if not layout and (root == "implicitbias" or root not in sys.stdlib_module_names | {"__future__"}):
                    found.append(f"imports {name}")
        elif isinstance(node, ast.Call):
            fn = node.func
            name = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if name in COMPUTING_CALLS:
                found.append(f"calls {name}")
        elif isinstance(node, ast.Attribute) and node.attr in COMPUTING_ATTRIBUTES:
            found.append(f"reads .{node.attr}")
    return found


def test_the_layout_check_can_fail():
    computing = ("from implicitbias.numerics.maxmargin import gd_census\nimport numpy as np\n"
                 "def exhibit(ctx):\n    from implicitbias.claims import forgetting as fg\n"
                 "    from implicitbias.validation.batched import train_ensembles\n"
                 "    fg.measure_groups(ctx, None, ())\n    ctx.store.records('k')\n"
                 "    return ctx.map('k', gd_census.census_cell, [])\n")
    assert sorted(computing_uses(computing)) == [
        "calls map", "calls measure_groups", "imports implicitbias.numerics.maxmargin",
        "imports implicitbias.validation.batched", "imports numpy", "reads .store"]
    layout = ("from __future__ import annotations\nimport math\nfrom implicitbias.claims.depth.phase_atlas import phase_atlas\n"
              "from implicitbias.figures import markdown_table\ndef exhibit(ctx):\n    return str(phase_atlas(ctx))\n")
    assert computing_uses(layout) == []


@pytest.mark.parametrize("name", list(available_sections()))
def test_sections_are_layout_only(name):
    section = available_sections()[name]
    assert not hasattr(section, "build")
    assert {"NAME", "ORDER", "TITLE"} <= set(vars(section))
    assert computing_uses(inspect.getsource(section)) == [], f"section {name} computes"
