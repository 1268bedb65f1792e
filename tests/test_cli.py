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


# -- commands start fast: no science is imported to parse a command line --------------------------

HEAVY = ("torch", "sympy", "scipy", "matplotlib", "numpy", "cvxpy")


@pytest.mark.parametrize("command", ["clocks", "phase", "dynamics", "sweep", "headrank", "report", "verify", "analyse"])
def test_command_help_imports_no_science(command):
    code = (
        "import sys\n"
        "from implicitbias.cli import build_parser\n"
        f"build_parser([{command!r}, '--help'])\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_only_the_named_command_is_imported():
    code = (
        "import sys\n"
        "from implicitbias.cli import build_parser\n"
        "build_parser(['--store', 'report', 'clocks', '--help'])\n"
        "print(sorted(m for m in sys.modules if m.startswith('implicitbias.commands.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "['implicitbias.commands.clocks']"


def test_light_choice_lists_match_the_science():
    from implicitbias.commands import headrank
    from implicitbias.validation import head_rank

    assert headrank.HEAD_INITS == head_rank.HEAD_INITS


@pytest.mark.parametrize("text", ["1,,2", "1,2,", "", ",", "1,x"])
def test_bad_lists_are_one_line_errors(text, capsys):
    assert main(["dynamics", "basin", "--L", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "L must be" in err
