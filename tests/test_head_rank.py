"""Spec A, section 5, on a real network: deeper heads lower the effective rank of the mean logits,
wider heads raise it (ResNet-20 body + deep linear head, offline digits, CPU size).

Also: the geometry recorded per run equals its closed-form values on an exactly collapsed
simplex-ETF network, and the aligned ("Hadamard-like") head start has equal, aligned singular values.
"""

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from implicitbias.cli import main
from implicitbias.theory.params import ParameterError
from implicitbias.validation import head_rank as hr
from implicitbias.validation.data import dataset_path_problem
from implicitbias.validation.models import Head, Network

TOLERANCE = 0.3  # effective-rank units every trend must exceed


@pytest.fixture(scope="module")
def digits_grid():
    base = {"dataset": "digits", "epochs": 12, "batch_size": 256, "width": 0.25, "lr": 3e-3}
    configs = hr.grid(base, depths=[1, 4], widths=[16, 64], seeds=[0, 1])
    records = [hr.execute(c, options={"threads": 1}) for c in configs]
    return hr.cell_rows(configs, records)


# slow (38 s of training): the default report judges the same digits grids; the rules are tested on synthetic evidence
@pytest.mark.slow
def test_rank_falls_with_depth_and_rises_with_width(digits_grid):
    depth = hr.depth_lines(digits_grid)
    width = hr.width_lines(digits_grid)
    assert len(depth) == 2 and all(line[0][1] - line[-1][1] > TOLERANCE for line in depth.values()), depth
    assert len(width) == 1 and all(line[-1][1] - line[0][1] > TOLERANCE for line in width.values()), width
    shallow = next(r for r in digits_grid if r.depth == 1)
    assert shallow.train_acc_min > 0.95  # the shallow reference fits its training set


def _collapsed_etf_network(K: int) -> tuple[Network, torch.Tensor, torch.Tensor]:
    """Body: identity on one-hot inputs; head W_2 W_1 = I - 11^T/K (simplex ETF logits)."""
    head = Head(K, K, depth=2, width=K).double()
    with torch.no_grad():
        head.layers[0].weight.copy_(torch.eye(K, dtype=torch.float64))
        head.layers[1].weight.copy_(torch.eye(K, dtype=torch.float64) - 1.0 / K)
    y = torch.arange(K).repeat(3)
    x = torch.nn.functional.one_hot(y, K).double().reshape(len(y), K, 1, 1)
    return Network(torch.nn.Flatten(), head).double(), x, y


@pytest.mark.parametrize("K", [3, 5, 10])
def test_geometry_on_collapsed_simplex_etf(K):
    net, x, y = _collapsed_etf_network(K)
    g = hr.head_geometry(net, x, y)
    for name, value in g["logit_rank"].items():
        assert value == pytest.approx(K - 1, abs=1e-9), name
    assert g["layer_ranks"][0]["roy_vetterli"] == pytest.approx(K - 1, abs=1e-9)
    assert g["nc"]["nc1"] == pytest.approx(0, abs=1e-12)
    assert g["nc"]["nc4_agreement"] == 1.0 and g["train_acc"] == 1.0


@settings(max_examples=15, deadline=None)
@given(st.integers(1, 5), st.integers(2, 12), st.integers(3, 20), st.floats(0.05, 2.0), st.integers(0, 2**16))
def test_aligned_head_init_has_equal_aligned_singular_values(L, K, d, s, seed):
    head = Head(d, K, depth=L, width=d).double()
    hr.init_head_(head, "aligned", s, seed)
    product = torch.eye(d, dtype=torch.float64)
    for layer in head.layers:
        product = layer.weight @ product
    sv = torch.linalg.svdvals(product)
    assert torch.allclose(sv[: min(K, d)], torch.full((min(K, d),), s**L, dtype=torch.float64), rtol=1e-9)


@pytest.mark.parametrize(
    "bad, name",
    [({"head_init": "hadamardish"}, "head_init"), ({"weight_decay": 1e-3}, "weight_decay"),
     ({"head_init_scale": -1.0}, "head_init_scale"), ({"head_depth": 0}, "head_depth")],
)
def test_bad_config_names_the_parameter(bad, name):
    with pytest.raises(ParameterError, match=name):
        hr.canonical_head_config({"dataset": "digits", **bad})


def test_cli_bad_input_is_one_line(capsys):
    assert main(["headrank", "--L", "1,x"]) == 2
    assert main(["headrank", "--head-init", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and all("Traceback" not in e for e in err)


@pytest.mark.slow
@pytest.mark.skipif(dataset_path_problem("fashion_mnist", None) is not None,
                    reason="needs Fashion-MNIST: apt-get install dataset-fashion-mnist")
def test_fashion_mnist_rank_falls_with_depth():
    """Real images (Debian's dataset-fashion-mnist): the report's full-tier grid, 4k training images."""
    from implicitbias.claims.depth.head_rank import GRIDS

    ((base, axes),) = GRIDS["fashion_mnist"]
    configs = hr.grid(base, **axes)
    rows = hr.cell_rows(configs, [hr.execute(c, options={"threads": 1}) for c in configs])
    assert all(line[0][1] > line[-1][1] for line in hr.depth_lines(rows).values())
    assert np.mean([line[-1][1] - line[0][1] for line in hr.width_lines(rows).values()]) > 0


def _row(init, L, w, rank):
    return hr.HeadRankRow(head_init=init, depth=L, width=w, seeds=1, rank_mean=rank, rank_std=0.0, test_acc_mean=0.9,
                          train_acc_min=1.0, nc1_mean=0.1)


def test_lines_start_every_depth_line_at_the_depth_one_head():
    rows = [_row("he", 1, None, 9.0), _row("he", 2, 16, 7.0), _row("he", 2, 64, 8.0), _row("he", 4, 16, 5.0),
            _row("he", 4, 64, 6.5), _row("small", 2, 64, 4.0), _row("small", 4, 64, 3.0)]
    assert hr.depth_lines(rows) == {("he", 16): [(1, 9.0), (2, 7.0), (4, 5.0)], ("he", 64): [(1, 9.0), (2, 8.0), (4, 6.5)],
                                    ("small", 64): [(2, 4.0), (4, 3.0)]}
    assert hr.width_lines(rows) == {("he", 2): [(16, 7.0), (64, 8.0)], ("he", 4): [(16, 5.0), (64, 6.5)]}


def test_cli_out_writes_the_table_that_json_prints(tmp_path, capsys):
    """``headrank --out`` writes headrank.csv (and .md); ``--json`` prints the same rows."""
    import csv
    import json

    argv = ["--store", str(tmp_path / "s.sqlite"), "headrank", "--dataset", "synthetic", "--epochs", "1", "--L", "1,2",
            "--widths", "4", "--seeds", "0", "--train-size", "64", "--val-size", "16", "--test-size", "16",
            "--batch-size", "32", "--width", "0.0625", "--no-progress"]
    assert main([*argv, "--out", str(tmp_path / "hr")]) == 0
    capsys.readouterr()
    assert main([*argv, "--json"]) == 0
    printed = json.loads(capsys.readouterr().out)
    with (tmp_path / "hr" / "headrank.csv").open() as fh:
        written = list(csv.DictReader(fh))
    assert [r["depth"] for r in printed] == [1, 2] and [int(r["depth"]) for r in written] == [1, 2]
    assert [float(r["rank_mean"]) for r in written] == [r["rank_mean"] for r in printed]
    assert (tmp_path / "hr" / "headrank.md").read_text().startswith("| head_init |")
