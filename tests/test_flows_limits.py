"""``implicitbias flows`` never hangs: every optimiser, dimension and order it allows derives in
bounded time (slow tier), and what it refuses is one line naming the limit."""

import subprocess
import sys

import pytest

from implicitbias.cli import main
from implicitbias.commands import flows
from implicitbias.theory.updates import ALIASES


def test_every_optimizer_has_limits():
    names = {ALIASES.get(n, n) for n in flows.NAMES} - {"sgd_rr"}
    for l2 in (False, True):
        assert names <= set(flows.MAX_ORDER[l2])
        assert {f"sgd_rr{m}" for m in range(2, flows.MAX_MINIBATCHES + 1)} <= set(flows.MAX_ORDER[l2])
        for key, row in flows.MAX_ORDER[l2].items():
            assert len(row) == 4 and all(-1 <= o <= 3 for o in row)
            assert list(row) == sorted(row, reverse=True)  # cost grows with the dimension
            if l2:  # L2 decay never makes a derivation cheaper
                assert all(a <= b for a, b in zip(row, flows.MAX_ORDER[False][key]))


@pytest.mark.parametrize(
    "argv, match",
    [
        (["--optimizer", "adam", "--order", "3"], "order must be <= 1 for adam in dim 1"),
        (["--optimizer", "gd", "--order", "3", "--dim", "2"], "order must be <= 2 for gd in dim 2"),
        (["--optimizer", "sgd", "--minibatches", "3", "--order", "2", "--dim", "2"],
         "order must be <= 1 for sgd over 3 minibatches in dim 2"),
        (["--optimizer", "adamw", "--l2"], "order must be <= 0 for adamw with L2 decay in dim 1"),
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
    for l2, table in flows.MAX_ORDER.items():
        for key, row in table.items():
            optimizer, m = ("sgd", int(key[6:])) if key.startswith("sgd_rr") else (key, 1)
            for dim, order in enumerate(row, start=1):
                if order >= 0:
                    yield optimizer, dim, order, m, l2


@pytest.mark.slow
@pytest.mark.parametrize("optimizer, dim, order, m, l2", list(_allowed()))
def test_every_allowed_case_finishes(optimizer, dim, order, m, l2):
    """The limits hold: the largest allowed order ends well within a minute on the 2-core dev machine."""
    call = f"show({optimizer!r}, {order}, {dim}, minibatches={m}, l2={l2})"
    res = subprocess.run([sys.executable, "-c", f"from implicitbias.commands.flows import show; {call}"],
                         capture_output=True, text=True, timeout=90)
    assert res.returncode == 0, res.stderr
