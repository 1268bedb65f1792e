"""``implicitbias flows`` never hangs: every optimiser, dimension and order it allows derives in
bounded time (slow tier), and what it refuses is one line naming the limit."""

import subprocess
import sys

import pytest

from implicitbias.cli import main
from implicitbias.commands import flows
from implicitbias.theory.updates import UPDATES


def test_every_optimizer_has_limits():
    assert set(flows.MAX_ORDER) == set(flows.NAMES) - {"sgd_rr"}
    assert set(UPDATES) <= set(flows.NAMES)
    for row in [*flows.MAX_ORDER.values(), *flows.MAX_ORDER_RESHUFFLED.values()]:
        assert len(row) == 4 and all(-1 <= o <= 3 for o in row)
        assert list(row) == sorted(row, reverse=True)  # cost grows with the dimension


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--optimizer", "adam", "--order", "3"], "order must be <= 1 for adam in dim 1"),
        (["--optimizer", "gd", "--order", "3", "--dim", "2"], "order must be <= 2 for gd in dim 2"),
        (["--optimizer", "sgd", "--minibatches", "3", "--order", "2"], "order must be <= 1 for sgd over 3 minibatches"),
        (["--optimizer", "sgd", "--minibatches", "5"], "minibatches must be"),
        (["--optimizer", "muon", "--minibatches", "2"], "applies to sgd only"),
        (["--dim", "5"], "dim must be"),
    ],
)
def test_refused_orders_are_one_line(argv, match, capsys):
    assert main(["flows", *argv]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and match in err, err


def _allowed():
    for name, row in flows.MAX_ORDER.items():
        if name in ("sgd", "sgd_momentum"):
            continue  # aliases of gd and heavy_ball
        for dim, order in enumerate(row, start=1):
            if order >= 0:
                yield name, dim, order, 1
    for m, row in flows.MAX_ORDER_RESHUFFLED.items():
        for dim, order in enumerate(row, start=1):
            if order >= 0:
                yield "sgd", dim, order, m


@pytest.mark.slow
@pytest.mark.parametrize("optimizer, dim, order, m", list(_allowed()))
def test_every_allowed_case_finishes(optimizer, dim, order, m):
    """The limits hold: the largest allowed order, with L2 decay (the costlier variant), ends well
    within a minute on the 2-core dev machine."""
    call = f"show({optimizer!r}, {order}, {dim}, minibatches={m}, l2=True)"
    res = subprocess.run([sys.executable, "-c", f"from implicitbias.commands.flows import show; {call}"],
                         capture_output=True, text=True, timeout=90)
    assert res.returncode == 0, res.stderr
