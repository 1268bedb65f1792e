"""C5 (larger batches remember more): the memory at the smallest batch over the largest, on
synthetic records: every outcome, the checkpoint it judges, its threshold."""

import pytest
from spec_b_records import SEEDS8, group, judged, moved, noisy

from implicitbias.claims.forgetting.c5_larger_batches_keep_more_memory import CLAIM
from implicitbias.validation.analysis import group_runs

BATCHES = (16, 32, 64, 128, 256)


def evidence(memory_points, seeds=SEEDS8, batches=BATCHES, **kw):
    """One group per batch size whose memory is ``memory_points(b)`` points (noise 0.5 points)."""
    runs = []
    for i, b in enumerate(batches):
        runs += group({"batch_size": b}, seeds=seeds, accuracy=noisy(memory_points(b) / 100, draw=i), **kw)
    return CLAIM.evidence(group_runs(runs), "synthetic")


def verdict(memory_points, seeds=SEEDS8, batches=BATCHES, **kw):
    return judged(CLAIM, evidence(memory_points, seeds, batches, **kw), 0)


def test_agrees_when_memory_rises_with_the_batch():
    v = verdict(lambda b: {16: 0.5, 32: 1.5, 64: 2.5, 128: 3.5, 256: 4.5}[b])
    assert v.verdict == "agrees" and v.numbers["estimate"].hi < 1
    assert "exact permutation p" in v.measured and "120 pairings" in v.measured


def test_disagrees_when_memory_falls_with_the_batch():
    v = verdict(lambda b: {16: 4.5, 32: 3.5, 64: 2.5, 128: 1.5, 256: 0.5}[b])
    assert v.verdict == "disagrees" and v.numbers["estimate"].lo > 1


def test_inconclusive_on_a_flat_memory():
    assert verdict(lambda b: 3.0).verdict == "inconclusive"


def test_inconclusive_with_too_few_batch_sizes_or_seeds():
    assert verdict(lambda b: 3.0, batches=(64, 128)).verdict == "inconclusive"
    assert verdict(lambda b: 3.0, seeds=(0, 1)).verdict == "inconclusive"


def test_judges_every_checkpoint_minimum_not_only_interpolating_ones():
    """b = 16 never interpolates: the judged minimum over all checkpoints still counts it."""
    v = verdict(lambda b: {16: 0.5, 32: 1.5, 64: 2.5, 128: 3.5, 256: 4.5}[b])
    assert v.numbers["estimate"].checkpoint == "all"


def test_not_run_without_batch_sizes():
    adam = CLAIM.evidence(group_runs(group({"optimizer": "adam"}, accuracy=noisy(0.01))))
    assert CLAIM.judge(adam).verdict == "not run"


def test_the_threshold_is_the_pre_registered_value_and_moved_by_20_percent_flips_a_case():
    assert CLAIM.threshold("grows") == 1.0
    ev = evidence(lambda b: {16: 1.5, 32: 2.0, 64: 2.5, 128: 3.0, 256: 3.5}[b])
    hi = judged(CLAIM, ev).numbers["estimate"].hi  # bound 1 / grows: hi < 1 / grows agrees
    outcomes = moved(CLAIM, ev, "grows", [f / hi for f in (1.2, 1 / 1.2)])
    assert outcomes[0] in ("inconclusive", "disagrees") and outcomes[1] == "agrees"


SYNTHETIC_VERDICTS = [  # read by tests/test_claims_layer.py: every outcome of the rule (simulated OC included)
    ("agrees", evidence(lambda b: {16: 0.5, 32: 1.5, 64: 2.5, 128: 3.5, 256: 4.5}[b])),
    ("disagrees", evidence(lambda b: {16: 4.5, 32: 3.5, 64: 2.5, 128: 1.5, 256: 0.5}[b])),
    ("inconclusive", evidence(lambda b: 3.0, batches=(64, 128))),
    ("not run", CLAIM.evidence(group_runs(group({"optimizer": "adam"}, accuracy=noisy(0.01))))),
]


def test_states_every_batch_sizes_radial_memory_at_its_checkpoint():
    v = verdict(lambda b: 3.0)
    assert [label.split(",")[1] for label in v.numbers["radial"]] == [f" b {b}" for b in BATCHES]
    assert all(r["checkpoint"] == "all" for r in v.numbers["radial"].values())
    assert "radial memory at the all checkpoint: sgd lr 0.1, b 16, 6 ep: norm slope 1.00" in v.measured


# -- each premise failing alone and each bound exactly (issue 29 item 7) -------------------------------

RISING = {16: 0.5, 32: 1.5, 64: 2.5, 128: 3.5, 256: 4.5}


def _premise(batches=BATCHES, seeds=SEEDS8, largest_m=None):
    """C5's premise at the all-checkpoint minimum (the largest batch's memory replaced if given)."""
    from dataclasses import replace

    d = evidence(lambda b: RISING[b], seeds=seeds, batches=batches).data
    if largest_m is not None:
        mems = list(d.memory["all"])
        mems[-1] = replace(mems[-1], m=largest_m)
        d = replace(d, memory={**d.memory, "all": mems})
    return CLAIM.parts(d, "all", 0)[1]


def test_three_batch_sizes_of_three_complete_seeds_are_enough_two_are_not():
    assert CLAIM.threshold("min_batches") == 3
    assert _premise(batches=(16, 64, 256), seeds=(0, 1, 2)) == ""
    assert _premise(batches=(16, 256)) == "fewer than 3 batch sizes with 3 complete seeds"
    v = verdict(lambda b: RISING[b], batches=(16, 64, 256), seeds=(0, 1, 2))
    assert "exact permutation p" in v.measured and "(6 pairings)" in v.measured  # the trend beside, at 3 sizes


@pytest.mark.parametrize("m, none", [(0.5, False), (0.0, True)])
def test_the_largest_batch_must_show_memory(m, none):
    """A largest-batch memory of 0.5 points (below 1) is memory; 0 is none (the ratio's denominator)."""
    assert (_premise(largest_m=m) == "the largest batch (b 256) shows no memory") == none
