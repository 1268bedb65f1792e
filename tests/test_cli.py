"""The command line: bad input is one line on stderr with exit status 2, never a traceback."""

import subprocess
import sys

import fake_claims
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


@pytest.mark.parametrize("command", ["clocks", "phase", "dynamics", "sweep", "headrank", "report", "verify", "analyse",
                                     "predict"])
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


@pytest.mark.parametrize("text", ["1,,2", "1,2,", "", ",", "1,x", " ", ",1"])
def test_bad_lists_are_one_line_errors(text, capsys):
    assert main(["dynamics", "basin", "--L", text]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "L must be" in err


# -- one error path ---------------------------------------------------------------------------------

def _crash(*_):
    raise ZeroDivisionError("division by zero in the check")


@pytest.mark.parametrize("where, name, command", [("exhibit", "section fake", ["report", "--executor", "inline"]),
                                                  ("measure", "claim T0", ["verify"])])
def test_a_crashed_computation_exits_2_naming_it(monkeypatch, capsys, tmp_path, where, name, command):
    if where == "exhibit":
        fake_claims.install(monkeypatch, fake_claims.fake_claim("fake"), exhibits={"fake": _crash})
    else:
        fake_claims.install(monkeypatch, fake_claims.fake_claim("fake", measure=_crash))
    assert main([*command, "--no-progress", "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert f"{name} failed to compute: ZeroDivisionError: division by zero in the check" in err


def test_unexpected_error_is_one_line_marked_internal(monkeypatch, capsys):
    from implicitbias.commands import clocks

    monkeypatch.setattr(clocks, "forgetting_clocks", _crash)
    assert main(["clocks"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error" in err and "ZeroDivisionError" in err
    monkeypatch.setenv("IMPLICITBIAS_TRACEBACK", "1")  # for developers: the traceback
    with pytest.raises(ZeroDivisionError):
        main(["clocks"])


OUT_COMMANDS = [
    ["analyse"],
    ["dynamics", "trajectory", "--K", "2", "--L", "1"],
    ["dynamics", "basin", "--K", "2", "--L", "1"],
    ["phase", "--K-max", "2", "--L-max", "1", "--executor", "inline"],
    ["report", "--executor", "inline"],
    ["verify"],
]


@pytest.mark.parametrize("command", OUT_COMMANDS, ids=lambda c: " ".join(c[:2]))
@pytest.mark.parametrize("where, match", [("file", "is a file"), ("file/inside", "lies inside the file"),
                                          ("", "must be a folder path"), ("locked/out", "is read-only")])
def test_bad_output_folder_is_one_line_before_any_work(tmp_path, capsys, monkeypatch, command, where, match):
    from test_store_files import read_only

    monkeypatch.chdir(tmp_path)
    (tmp_path / "file").write_text("x")
    (tmp_path / "locked").mkdir()
    out = str(tmp_path / where) if where else ""
    with read_only(tmp_path / "locked"):
        assert main([*command, "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and match in err, err
    assert (tmp_path / "file").read_text() == "x"


@pytest.mark.parametrize(
    "argv, match",
    [
        (["flows", "--minibatches", "-1"], "minibatches must be"),
        (["flows", "--minibatches", "2", "--optimizer", "adam"], "applies to sgd only"),
        (["clocks", "--every", "-1"], "every must be"),
        (["clocks", "--lr", "1e308"], "lr must be"),
        (["headrank", "--threads", "0"], "threads must be"),
        (["report", "--only", ""], "only must be"),
        (["dynamics", "basin", "--margin", "-1"], "margin must be"),
        (["dynamics", "trajectory", "--seed", "-1"], "seed must be"),
        (["dynamics", "trajectory", "--t-end", "1e-3"], "t-end must be"),
        (["phase", "--seed", str(2**64)], "seed must be"),
        (["sweep", "tiny", "--device", "meta", "--dry-run"], "device must be"),
        (["sweep", "tiny", "--device", "cuda", "--dry-run"], "no CUDA device"),
        (["sweep", "tiny", "--executor", "dask", "--address", "foo", "--dry-run"], "cannot reach a Dask scheduler"),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, list) else "",
)
def test_measured_nonsense_is_refused_in_one_line(argv, match, capsys, tmp_path, monkeypatch):
    """The cases of issue 9's measurements that used to pass silently or end in a traceback."""
    monkeypatch.chdir(tmp_path)
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert err.count("\n") == 1 and match in err and "Traceback" not in err, err
    assert out == ""  # nothing printed before the error


def test_unreachable_dask_scheduler_fails_fast(capsys):
    import time

    t0 = time.monotonic()
    assert main(["sweep", "tiny", "--executor", "dask", "--address", "tcp://127.0.0.1:1", "--dry-run"]) == 2
    assert time.monotonic() - t0 < 30  # 5 s connect timeout (it took 33 s before)
    assert "cannot reach a Dask scheduler" in capsys.readouterr().err
