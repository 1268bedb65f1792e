"""The command line: bad input is one line on stderr with exit status 2, never a traceback."""

import subprocess
import sys

import pytest

from implicitbias.cli import main
from implicitbias.theory import params


def run_cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "implicitbias", *args], capture_output=True, text=True, timeout=600
    )


def test_unknown_command_is_one_line():
    res = run_cli("no-such-command")
    assert res.returncode == 2
    assert len(res.stderr.strip().splitlines()) == 1
    assert "Traceback" not in res.stderr


def test_bad_choice_exits_2(capsys):
    assert main(["report", "--only", "no-such-section", "--out", "unused"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "only" in err[0]


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: params.integer("K", 1, minimum=2), "K"),
        (lambda: params.integer("L", 2.5, minimum=1), "L"),
        (lambda: params.real("lr", float("nan"), minimum=0, open_minimum=True), "lr"),
        (lambda: params.real("lr", 0.0, minimum=0, open_minimum=True), "lr"),
        (lambda: params.power_of_two("K", 6), "K"),
        (lambda: params.choice("optimizer", "adamx", ["sgd", "adam"]), "optimizer"),
    ],
)
def test_parameter_errors_name_the_parameter(call, name):
    with pytest.raises(params.ParameterError, match=rf"^{name} must"):
        call()
