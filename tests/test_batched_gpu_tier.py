"""The GPU tier's specs (validation/specs/gpu_h200*.toml) keep the tier rules: >= 3 seeds per sigma_w in
every block, and ensembles of ``max_members`` runs that each hold one whole block, so a sweep cut by
time (benchmarks/gpu_h200.sh) keeps every block it finished.  The specs name a CUDA device and
Fashion-MNIST, so they are read here with the device dropped and a synthetic stand-in for the data;
the script itself runs end to end at toy size in tests/test_gpu_h200_script.py (TINY=1).
"""

import tomllib
from collections import Counter
from pathlib import Path

import pytest

from implicitbias.validation.batched import ensembles
from implicitbias.validation.sweep import load_spec

SPECS = sorted((Path(__file__).resolve().parents[1] / "validation" / "specs").glob("gpu_h200*.toml"))


def _on_cpu(path: Path):
    raw = tomllib.loads(path.read_text())
    raw["options"] = {k: v for k, v in raw["options"].items() if k != "device"}
    if raw["base"]["dataset"] == "fashion_mnist":
        raw["base"] = {k: v for k, v in raw["base"].items() if k != "train_size"} | {"dataset": "synthetic"}
    return load_spec(raw), raw["options"]


def test_the_gpu_tier_has_its_specs_and_their_cpu_smoke_versions():
    assert {p.stem for p in SPECS} == {"gpu_h200", "gpu_h200_collapse", "gpu_h200_tiny", "gpu_h200_collapse_tiny"}


@pytest.mark.parametrize("path", SPECS, ids=[p.stem for p in SPECS])
def test_every_block_has_three_seeds_per_sigma_w_and_its_own_ensembles(path):
    spec, options = _on_cpu(path)
    label = {id(c): name for name, c in spec.runs}
    blocks = Counter(label.values())
    for name in blocks:
        seeds = Counter(c["sigma_w"] for n, c in spec.runs if n == name)
        assert min(seeds.values()) >= 3, (name, seeds)
    assert options["batched"] and options["max_members"] == max(blocks.values())
    parts = ensembles(spec.configs, options["max_members"])
    assert sorted(len(p) for p in parts) == sorted(blocks.values())
    assert all(len({label[id(c)] for c in p}) == 1 for p in parts)
