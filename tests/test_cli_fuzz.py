"""Fuzz of the command line: every command and every option (discovered from the parser, so a
new option is fuzzed the day it is added) with values from pools of nonsense and of cheap valid
values.  Whatever the input: exit status 0 or 2, never a traceback, never a hang, and an exit 2
is exactly one line on stderr, a user error (not "internal error").  Values that are nonsense for
every option of their kind (negative, not-a-number, infinite, 2^64 for numbers; empty items for
lists) must give exit 2: no silent success on nonsense.

Commands run in-process through ``implicitbias.cli.main`` (one interpreter, imports paid once).
Sizes are bounded by a cheap base command line per command, so every run that passes validation
is short.  ``report`` and ``verify`` compute the whole report, minutes: here their science
(``build_report``) is replaced by a stub that only lays out the folder, so what is fuzzed is their
command line, store and output folder.  The slow tier fuzzes more examples and the Dask executor.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import shutil
import sqlite3
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from implicitbias.cli import build_parser, main


class Hang(BaseException):
    """Raised by the alarm: not an Exception, so the command line's error path cannot swallow it."""


def _leaf_parsers() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """Every runnable command (``("dynamics", "basin")`` for nested ones) and its parser."""
    found = {}

    def walk(parser, path):
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        if not subs:
            found[path] = parser
        for sub in subs:
            for name, child in sub.choices.items():
                walk(child, (*path, name))

    walk(build_parser(), ())
    return found


LEAVES = _leaf_parsers()

# a cheap base command line per command: what the fuzzed options replace or add to
BASE = {
    ("clocks",): ["--epochs", "3", "--n-train", "100"],
    ("predict",): ["--epochs", "3", "--n-train", "100", "--batch-size", "16"],
    ("flows",): ["--order", "0"],
    ("dynamics", "trajectory"): ["--K", "2", "--L", "1", "--t-end", "10", "--margin", "2"],
    ("dynamics", "basin"): ["--K", "2", "--L", "1", "--scales", "1", "--eps", "0.1", "--seeds", "1", "--t-end", "10",
                            "--margin", "2", "--executor", "inline"],
    ("phase",): ["--kmin", "2", "--kmax", "2", "--lmax", "1", "--executor", "inline", "--no-progress"],
    ("sweep",): ["SPEC", "--dry-run", "--no-progress"],
    ("analyse",): [],
    ("import",): ["RUNS"],
    ("report",): ["--executor", "inline", "--no-progress"],
    ("verify",): ["--no-progress"],
    ("headrank",): ["--dataset", "synthetic", "--epochs", "1", "--depths", "1", "--widths", "4", "--seeds", "0",
                    "--train-size", "64", "--val-size", "16", "--test-size", "16", "--batch-size", "32",
                    "--width", "0.0625", "--no-progress"],
}
SLOW_COMMANDS = {("headrank",)}  # a training run per valid example

NONSENSE_NUMBERS = ["-1", "nan", "inf", "-inf", "x", "", "18446744073709551616", "1,2"]
NONSENSE_LISTS = ["1,,2", "1,2,", ",", ",1"]
INTS = ["-1", "0", "1", "2", "3", "4", "18446744073709551616", "-18446744073709551616", "1e3", "2.5", "x", "", " "]
FLOATS = ["-1", "0", "1e-3", "0.001", "0.5", "1", "2", "1e308", "-1e308", "nan", "inf", "-inf", "1e-320", "x", ""]
TEXTS = ["", " ", ",", "1,,2", "1,2,", "1", "2", "0,1", "1,2", "-1", "x", "nan", "1e308", "a,b", "é", "\u200b",
         "18446744073709551616"]


@pytest.fixture(scope="module")
def places(tmp_path_factory):
    """Files and folders a user may point options at: good ones and each kind of bad one."""
    root = tmp_path_factory.mktemp("fuzz")
    (root / "file").write_text("not a folder")
    (root / "notsql.sqlite").write_text("a,b\n1,2\n")
    (root / "folder").mkdir()
    (root / "latin1.toml").write_bytes(b"name = \"\xe9\"\n")
    (root / "spec.toml").write_text(
        'name = "fuzz"\n[base]\ndataset = "synthetic"\ndata_size = 100\nwidth = 0.0625\nepochs = 1\n'
        'batch_size = 16\nsigma_w = [1.0]\n[options]\nthreads = 1\n'
    )
    (root / "runs.csv").write_text(
        "run_id,sigma_w,seed,optimizer,batch_size,weight_decay,n_train,epoch,lr,train_acc,val_loss,val_acc,test_acc,"
        "kernel_norm\na,1,0,sgd,16,0,100,1,0.1,0.5,1.0,0.5,0.5,3.0\n")
    (root / "bad_types.toml").write_text('[base]\ndataset = "synthetic"\ndata_size = 100\nflip = "false"\n')
    db = sqlite3.connect(root / "foreign.sqlite")
    db.execute("CREATE TABLE t (a)")
    db.commit()
    db.close()
    return {
        "paths": [str(root / "out"), str(root / "file"), str(root / "file" / "inside"), str(root / "folder"), "",
                  str(root / "no" / "such" / "deep")],
        "stores": [str(root / "store.sqlite"), str(root / "notsql.sqlite"), str(root / "folder"),
                   str(root / "foreign.sqlite"), str(root / "file" / "inside.sqlite"), ""],
        "specs": [str(root / "spec.toml"), "tiny", str(root / "folder"), str(root / "latin1.toml"),
                  str(root / "bad_types.toml"), str(root / "missing.toml"), ""],
        "runs": [str(root / "runs.csv"), str(root / "spec.toml"), str(root / "folder"), str(root / "notsql.sqlite"),
                 str(root / "missing.csv"), ""],
        "root": root,
    }


def _options(parser):
    return [a for a in parser._actions if a.option_strings and not isinstance(a, (argparse._HelpAction,
                                                                                  argparse._VersionAction))]


def _is_list(action) -> bool:
    return "comma-separated" in (action.help or "") or action.dest in ("seeds", "only", "head_init") and action.type is None


def _values(action, places, slow):
    if action.choices:
        choices = [c for c in action.choices if slow or c not in ("dask", "slurm", "process")]
        return st.sampled_from([*choices, "nope", ""])
    if action.type is int:
        return st.sampled_from(INTS)
    if action.type is float:
        return st.sampled_from(FLOATS)
    if action.dest in ("out", "data_path"):
        return st.sampled_from(places["paths"])
    if action.dest == "address":
        return st.sampled_from(["foo", "tcp://127.0.0.1:1", "xyz://a:b", ""])
    return st.sampled_from(TEXTS)


def _nonsense(action, value) -> bool:
    """Values that no option of this kind may accept."""
    if action.type in (int, float):
        return value in NONSENSE_NUMBERS
    return _is_list(action) and value in NONSENSE_LISTS


@st.composite
def command_lines(draw, leaf, places, slow):
    parser = LEAVES[leaf]
    options = _options(parser)
    base = [places["specs"][0] if a == "SPEC" else a for a in BASE[leaf]]
    if leaf == ("sweep",):
        base[0] = draw(st.sampled_from(places["specs"])) if draw(st.booleans()) else base[0]
    if leaf == ("import",):
        base[0] = draw(st.sampled_from(places["runs"]))
    chosen = draw(st.lists(st.sampled_from(options), min_size=1, max_size=3, unique_by=lambda a: a.dest))
    argv, nonsense = [], False
    fuzzed = {a.option_strings[0] for a in chosen}
    skip = False
    for i, arg in enumerate(base):  # drop base values of fuzzed options
        if skip:
            skip = False
            continue
        if arg in fuzzed:
            skip = i + 1 < len(base) and not base[i + 1].startswith("--")
            continue
        argv.append(arg)
    for action in chosen:
        flag = action.option_strings[0]
        if action.nargs == 0:
            argv.append(flag)
            continue
        value = draw(_values(action, places, slow))
        nonsense |= _nonsense(action, value)
        argv += [f"{flag}={value}"]
    store = draw(st.sampled_from(places["stores"][:1] * 4 + places["stores"]))
    return ["--store", store, *leaf, *argv], nonsense


def _stub_report(monkeypatch):
    import implicitbias.report as report

    def build_report(out, store, **kw):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "report.md").write_text("stub\n")
        return report.Report(Path(out) / "report.md", [])

    monkeypatch.setattr(report, "build_report", build_report)


def _run(argv, seconds):
    """``main(argv)`` with stdout/stderr captured and an alarm against hangs."""
    err, out = io.StringIO(), io.StringIO()

    def alarm(*_):
        raise Hang(f"{argv} ran past {seconds} s")

    old = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            try:
                status = main(argv)
            except SystemExit as exc:  # a command must return, not exit
                status = f"SystemExit({exc.code})"
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    return status, err.getvalue()


OUTCOMES: dict[str, int] = {}


@pytest.fixture(scope="module", autouse=True)
def _tally():
    """Print how the fuzzed command lines ended (``pytest -s`` shows it)."""
    yield
    print(f"\nfuzzed command lines: {sum(OUTCOMES.values())}, outcomes {dict(sorted(OUTCOMES.items()))}")


def _check(argv, nonsense, seconds=60):
    status, err = _run(argv, seconds)
    key = f"{argv[2]}: exit {status}" + (" (nonsense)" if nonsense else "")
    OUTCOMES[key] = OUTCOMES.get(key, 0) + 1
    assert status in (0, 2), f"{argv}: exit {status}\n{err[-2000:]}"
    assert "Traceback" not in err, f"{argv}: traceback\n{err[-2000:]}"
    if status == 2:
        # as a terminal shows it: a carriage return rewrites the line (a cleared progress bar)
        lines = [line.split("\r")[-1] for line in err.split("\n")]
        lines = [line for line in lines if line.strip()]
        assert len(lines) == 1, f"{argv}: {len(lines)} lines on stderr\n{err[-2000:]}"
        assert " error: " in lines[0] and "internal error" not in lines[0], f"{argv}: {lines[0]}"
    if nonsense:
        assert status == 2, f"{argv}: nonsense accepted (exit 0)"


EXAMPLES = {("clocks",): 40, ("predict",): 30, ("flows",): 25, ("dynamics", "trajectory"): 20, ("dynamics", "basin"): 20,
            ("phase",): 12, ("sweep",): 25, ("analyse",): 15, ("import",): 15, ("report",): 25, ("verify",): 15, ("headrank",): 15}


def _fuzz(leaf, places, monkeypatch, examples, slow):
    monkeypatch.chdir(places["root"])
    if not slow or leaf in (("report",), ("verify",)):
        _stub_report(monkeypatch)

    @settings(max_examples=examples, deadline=None, database=None,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
    @given(command_lines(leaf, places, slow))
    def fuzz(case):
        _check(*case)

    fuzz()


@pytest.mark.parametrize("leaf", [leaf for leaf in BASE if leaf not in SLOW_COMMANDS], ids=" ".join)
def test_fuzz_command_line(leaf, places, monkeypatch):
    _fuzz(leaf, places, monkeypatch, EXAMPLES[leaf], slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("leaf", list(BASE), ids=" ".join)
def test_fuzz_command_line_slow(leaf, places, monkeypatch):
    _fuzz(leaf, places, monkeypatch, 4 * EXAMPLES[leaf], slow=True)


def test_every_command_is_fuzzed():
    assert set(LEAVES) == set(BASE), "a new command needs a cheap base command line in BASE"


@pytest.mark.parametrize(
    "argv",
    [
        ["flows", "--optimizer", "adam", "--order", "3"],
        ["clocks", "--lr", "1e308"],
        ["dynamics", "trajectory", "--seed", "-1"],
        ["sweep", "tiny", "--device", "meta", "--dry-run"],
        ["--store", "", "clocks"],
    ],
    ids=lambda a: " ".join(a),
)
def test_real_entry_point_gives_one_line(argv, tmp_path):
    """The installed entry point (a fresh interpreter), not only ``main``: one line, exit 2, fast."""
    res = subprocess.run([sys.executable, "-m", "implicitbias", *argv], capture_output=True, text=True, timeout=120,
                         cwd=tmp_path, env={**os.environ, "IMPLICITBIAS_STORE": str(tmp_path / "s.sqlite")})
    assert res.returncode == 2 and res.stderr.count("\n") == 1 and "Traceback" not in res.stderr, res.stderr


# -- files the package reads: law files and store records -----------------------------------------
NAN, INF = float("nan"), float("inf")
# per entry of a law family, values that no law may hold there (each must be refused in one line)
BAD_LAW_ENTRIES = {
    "range": [[1.0], "1,2", [2.0, 1.0], [0.0, 1.0], [NAN, 1.0], [-1.0, 1.0], [1.0, INF], 5, None, [1.0, "x"], []],
    "band": [NAN, -1.0, "2", None, INF, True, [1.0]],
    "band_quantile": [0.0, 1.5, NAN, "0.9", None],
    "log_clock_knots": [[], [1.0], [NAN, 1.0], [2.0, 1.0], [1.0, 1.0], "x", 5, None],
    "spread_knots": [[], [NAN, NAN], [-1.0, -1.0], [1.0], "x", None],
    "groups": [5, [], [1], "x", None],
    "optimizers": [[], "sgd", [1], None],
    "clock": ["", 5, None],
    "verdict": ["", None, 1.0],
}


def _law_family():
    return {"clock": "T_SGD", "optimizers": ["sgd"], "log_clock_knots": [-2.0, 0.0, 2.0],
            "spread_knots": [8.0, 5.0, 2.0], "range": [0.1, 10.0], "band": 1.5, "band_quantile": 0.9,
            "verdict": "agrees", "groups": [{}, {}, {}]}


@st.composite
def bad_laws(draw):
    """A law file with one entry (of a family, or of the file) replaced by a value no law may hold,
    or removed; two-knot spread entries are non-monotone or of the wrong length."""
    law = {"calibrated_on": "fuzz", "families": {"sgd": _law_family(), "adaptive": {**_law_family(),
                                                                                    "optimizers": ["adam"]}}}
    where = draw(st.sampled_from(["family", "family", "family", "file"]))
    if where == "file":
        key = draw(st.sampled_from(["calibrated_on", "families", "whole", "family name"]))
        if key == "whole":
            return draw(st.sampled_from([[], "law", 5, None]))
        if key == "family name":
            law["families"]["nope"] = law["families"].pop("sgd")
        else:
            law[key] = draw(st.sampled_from([{}, [], 5, None] if key == "families" else [5, None, []]))
            if draw(st.booleans()):
                del law[key]
        return law
    entry = law["families"][draw(st.sampled_from(["sgd", "adaptive"]))]
    key = draw(st.sampled_from(sorted(BAD_LAW_ENTRIES) + ["non-monotone spreads"]))
    if key == "non-monotone spreads":
        entry["spread_knots"] = [8.0, 2.0, 5.0]
    elif draw(st.integers(0, 5)) == 0:
        del entry[key]
    else:
        entry[key] = draw(st.sampled_from(BAD_LAW_ENTRIES[key]))
    return law


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(law=bad_laws(), optimizer=st.sampled_from(["sgd", "adam"]))
def test_fuzz_malformed_law_files_are_refused_in_one_line(tmp_path, law, optimizer):
    path = tmp_path / "law.json"
    path.write_text(json.dumps(law))  # NaN and Infinity as Python's json writes them
    status, err = _run(["predict", "--optimizer", optimizer, "--epochs", "3", "--n-train", "100", "--batch-size", "16",
                        "--law", str(path)], 60)
    assert status == 2, f"{json.dumps(law)[:300]}: accepted"
    lines = [line for line in err.split("\n") if line.strip()]
    assert len(lines) == 1 and " error: law " in lines[0] and "internal error" not in lines[0], err


def test_a_sound_law_file_predicts_finite_bands(tmp_path, capsys):
    """The fuzzed law, unbroken, is accepted: the refusals above are of the damage, not of the law."""
    path = tmp_path / "law.json"
    path.write_text(json.dumps({"calibrated_on": "fuzz", "families": {"sgd": _law_family()}}))
    # T_SGD = 40 epochs x 7 steps x 0.1^2 / 16 = 0.175, inside [0.1, 10]
    assert main(["predict", "--optimizer", "sgd", "--lr", "0.1", "--epochs", "40", "--n-train", "100",
                 "--batch-size", "16", "--law", str(path)]) == 0
    out = capsys.readouterr().out
    assert "predicted end-of-training spread" in out and "nan" not in out


RECORD_TEXTS = ["{", "", "null", "[]", "[1, 2]", "{}", '{"status": "done"}', '"text"', "1e999", "\x00",
                '{"status": "done", "test_accuracy": NaN}']


@st.composite
def damaged_rows(draw):
    """An SQL update that damages one stored run the way files get damaged: its record replaced by
    malformed or foreign text, or its config truncated or replaced."""
    column = draw(st.sampled_from(["record", "record", "config"]))
    text = draw(st.sampled_from(RECORD_TEXTS + ([] if column == "record" else ['{"dataset": "digits"}'])))
    if column == "config" and draw(st.booleans()):
        return "UPDATE records SET config = substr(config, 1, length(config) / 2)", ()
    return f"UPDATE records SET {column} = ?", (text,)


@pytest.fixture(scope="module")
def swept_store(tmp_path_factory, places):
    """A store holding the finished runs of the fuzz spec (one training run, seconds)."""
    path = tmp_path_factory.mktemp("records") / "store.sqlite"
    assert main(["--store", str(path), "sweep", str(places["root"] / "spec.toml"), "--no-progress"]) == 0
    return path


@settings(max_examples=25, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(damage=damaged_rows(), command=st.sampled_from([["analyse"], ["analyse", "SPEC"], ["sweep", "SPEC", "--dry-run"]]))
def test_fuzz_damaged_store_records_are_one_line_or_recomputed(tmp_path, swept_store, places, monkeypatch, damage,
                                                               command):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "store.sqlite"
    shutil.copy(swept_store, path)
    db = sqlite3.connect(path)
    db.execute(*damage)
    db.commit()
    db.close()
    argv = ["--store", str(path), *[str(places["root"] / "spec.toml") if a == "SPEC" else a for a in command],
            *(["--out", str(tmp_path / "a")] if command[0] == "analyse" else [])]
    status, err = _run(argv, 120)
    lines = [line for line in err.split("\n") if line.strip()]
    if command == ["analyse"]:  # every stored run is read: the damaged one is named
        assert status == 2 and len(lines) == 1 and "damaged" in lines[0], err
    else:  # the runs of a spec are read by key: the damaged one counts as not done, to be recomputed
        assert status == 0 and not lines, err
