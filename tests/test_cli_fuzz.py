"""Fuzz of the command line: every command and every option (discovered from the parser, so a
new option is fuzzed the day it is added) with values from pools of nonsense and of cheap valid
values.  Whatever the input: exit status 0 or 2, never a traceback, never a hang, and an exit 2
is exactly one line on stderr, a user error (not "internal error").  Values that are nonsense for
every option of their kind (negative, not-a-number, infinite, 2^64 for numbers; empty items for
lists) must give exit 2: no silent success on nonsense.

Commands run in-process through ``implicitbias.cli.main`` (one interpreter, imports paid once).
Sizes are bounded by a cheap base command line per command, so every run that passes validation
is short.  ``report`` and ``verify`` compute the whole report or the theorem checks, minutes: here
their science (``build_report``, ``claims.evaluate``) is replaced by a stub that only lays out the
folder (judges nothing), so what is fuzzed is their command line, store and output folder.  The slow tier fuzzes more examples and the Dask executor.
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
COMMANDS = {leaf[0] for leaf in LEAVES}

# a cheap base command line per command: what the fuzzed options replace or add to
BASE = {
    ("clocks",): ["--epochs", "3", "--n-train", "100"],
    ("predict",): ["--epochs", "3", "--n-train", "100", "--batch-size", "16"],
    ("flows",): ["--order", "0"],
    ("dynamics", "trajectory"): ["--K", "2", "--L", "1", "--t-end", "10", "--margin", "2"],
    ("dynamics", "basin"): ["--K", "2", "--L", "1", "--scales", "1", "--perturbations", "0.1", "--starts", "1",
                            "--t-end", "10", "--margin", "2", "--executor", "inline"],
    ("phase",): ["--K-min", "2", "--K-max", "2", "--L-max", "1", "--executor", "inline", "--no-progress"],
    ("sweep",): ["SPEC", "--dry-run", "--no-progress"],
    ("analyse",): [],
    ("import",): ["RUNS"],
    ("report",): ["--executor", "inline", "--no-progress"],
    ("verify",): ["--no-progress"],
    ("headrank",): ["--dataset", "synthetic", "--epochs", "1", "--L", "1", "--widths", "4", "--seeds", "0",
                    "--train-size", "64", "--val-size", "16", "--test-size", "16", "--batch-size", "32",
                    "--width", "0.0625", "--no-progress"],
    ("store", "ls"): [],
    ("store", "show"): ["0000"],
    ("store", "export"): [],
    ("store", "prune"): ["--failed", "--dry-run"],
    ("store", "path"): [],
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
    """The options of a command, its global options included; not the hidden deprecated spellings."""
    return [a for a in parser._actions if a.option_strings and a.help != argparse.SUPPRESS
            and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


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
    if draw(st.booleans()):  # a global option goes before or after the command
        return ["--store", store, *leaf, *argv], nonsense
    return [*leaf, *argv, "--store", store], nonsense


def _stub_report(monkeypatch):
    import implicitbias.claims as claims
    import implicitbias.report as report

    monkeypatch.setattr(claims, "evaluate", lambda claim, ctx: [])  # verify's science

    def build_report(out, store, **kw):
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "report.md").write_text("stub\n")
        return report.Report(Path(out) / "report.md", [])

    monkeypatch.setattr(report, "build_report", build_report)


def _run(argv, seconds, out=None):
    """``main(argv)`` with stdout (into ``out`` when given) and stderr captured and an alarm against hangs."""
    err, out = io.StringIO(), io.StringIO() if out is None else out

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
    key = f"{next(a for a in argv if a in COMMANDS)}: exit {status}" + (" (nonsense)" if nonsense else "")
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
            ("phase",): 12, ("sweep",): 25, ("analyse",): 15, ("import",): 15, ("report",): 25, ("verify",): 15, ("headrank",): 15,
            ("store", "ls"): 15, ("store", "show"): 15, ("store", "export"): 15, ("store", "prune"): 15,
            ("store", "path"): 10}


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


# -- one dialect: global options anywhere, errors naming flags, --json everywhere ------------------
GLOBAL_VALUES = {"--store": ["s.sqlite", "a b/s.sqlite"], "--executor": ["inline", "process", "dask"],
                 "--workers": ["1", "3"], "--progress": [], "--no-progress": [], "--json": []}


def _base(leaf, places):
    files = {"SPEC": str(places["root"] / "spec.toml"), "RUNS": str(places["root"] / "runs.csv")}
    return [files.get(a, a) for a in BASE[leaf]]


@settings(max_examples=80, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(leaf=st.sampled_from(sorted(BASE)), data=st.data())
def test_global_options_before_and_after_the_command_parse_the_same(places, leaf, data):
    base = _base(leaf, places)
    typed = {a.split("=")[0].replace("--no-", "--") for a in base}  # the last of a repeated option wins: not repeated
    free = [f for f in sorted(GLOBAL_VALUES) if f.replace("--no-", "--") not in typed]
    chosen = data.draw(st.lists(st.sampled_from(free), unique=True, min_size=1, max_size=4))
    options = [x for flag in chosen for x in [flag, *([data.draw(st.sampled_from(GLOBAL_VALUES[flag]))]
                                                      if GLOBAL_VALUES[flag] else [])]]
    command = [*leaf, *base]
    before, after = [*options, *command], [*command, *options]
    assert vars(build_parser(before).parse_args(before)) == vars(build_parser(after).parse_args(after))


def test_every_command_has_the_global_options_and_every_option_help_with_its_default():
    for leaf, parser in LEAVES.items():
        flags = {s for a in _options(parser) for s in a.option_strings}
        assert set(GLOBAL_VALUES) <= flags, leaf
        text = parser.format_help()
        for action in _options(parser):
            assert action.help, f"{' '.join(leaf)} {action.option_strings[0]} has no help"
            if action.nargs != 0:  # a switch's default is off
                assert "default" in parser._get_formatter()._expand_help(action), (leaf, action.option_strings)
        assert "global options" in text


def test_a_bare_command_line_lists_the_commands(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert all(f"    {leaf[0]} " in out for leaf in LEAVES), out


VALID_BASE = {("clocks",): ["--batch-size", "16"]}  # what BASE needs to be a command line that succeeds


@st.composite
def nonsense_numbers(draw):
    leaf = draw(st.sampled_from([leaf for leaf in sorted(BASE) if leaf not in SLOW_COMMANDS]))
    numeric = [a for a in _options(LEAVES[leaf]) if a.type in (int, float)]
    if not numeric:
        return None
    return leaf, draw(st.sampled_from(numeric)), draw(st.sampled_from(["-1", "nan", "-inf", "x", "", "1,2"]))


@settings(max_examples=60, deadline=None, database=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=nonsense_numbers())
def test_errors_name_the_flag_typed(places, monkeypatch, case):
    """A nonsense number in any numeric option is one line that names the flag as typed (``--batch-size``,
    never the parameter ``batch_size``)."""
    if case is None:
        return
    leaf, action, value = case
    monkeypatch.chdir(places["root"])
    _stub_report(monkeypatch)
    flag = action.option_strings[0]
    base = _base(leaf, places) + VALID_BASE.get(leaf, [])
    if flag in base:  # the base's own value is replaced
        i = base.index(flag)
        del base[i:i + 2]
    status, err = _run(["--store", str(places["root"] / "store.sqlite"), *leaf, *base, f"{flag}={value}"], 60)
    assert status == 2 and flag in err and "internal error" not in err, err


def test_deprecated_spellings_still_work_with_a_notice(capsys):
    """The old spellings set the same parameter as the new ones for one release, with a notice."""
    old = ["phase", "--kmin", "3", "--kmax", "5", "--lmax", "2", "--depths", "1.5"]
    new = ["phase", "--K-min", "3", "--K-max", "5", "--L-max", "2", "--L-extra", "1.5"]
    parsed_old, parsed_new = vars(build_parser(old).parse_args(old)), vars(build_parser(new).parse_args(new))
    assert parsed_old.pop("deprecated") and parsed_old == parsed_new
    assert main(["flows", "--order", "0"]) == 0
    old = ["dynamics", "basin", "--eps", "0.1,0.2", "--seeds", "3"]
    args = build_parser(old).parse_args(old)
    assert (args.eps, args.seeds, len(args.deprecated)) == ("0.1,0.2", 3, 2)
    assert main(["dynamics", "basin", "--seeds", "0"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert "--seeds is deprecated, use --starts" in err[0] and "--seeds must be" in err[1], err


@pytest.fixture()
def json_store(tmp_path, swept_store):
    path = tmp_path / "store.sqlite"
    shutil.copy(swept_store, path)
    return path


@pytest.mark.parametrize("leaf", [leaf for leaf in BASE if leaf not in SLOW_COMMANDS], ids=" ".join)
def test_json_output_is_one_json_document(leaf, places, json_store, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _stub_report(monkeypatch)
    base = _base(leaf, places) + VALID_BASE.get(leaf, [])
    if leaf == ("store", "show"):
        from implicitbias.store import Store

        with Store(json_store) as store:
            base = [store.records_frame()["key"][0][:8]]
    status, out, err = _run_out(["--store", str(json_store), *leaf, *base, "--json"], 120)
    assert status == 0, err
    document = json.loads(out)
    assert isinstance(document, (list, dict))


def _run_out(argv, seconds):
    """``_run`` with the standard output too."""
    out = io.StringIO()
    status, err = _run(argv, seconds, out)
    return status, out.getvalue(), err


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
    assert len(lines) == 1 and " error: --law " in lines[0] and "internal error" not in lines[0], err


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


class _Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("flags, terminal, shown", [([], False, False), ([], True, True), (["--progress"], False, True),
                                                    (["--no-progress"], True, False), (["--json"], True, False),
                                                    (["--json", "--progress"], False, True)])
def test_progress_bars_only_on_a_terminal_unless_asked(monkeypatch, flags, terminal, shown):
    from implicitbias import cli

    monkeypatch.setattr(sys, "stderr", _Terminal() if terminal else io.StringIO())
    args = build_parser(["clocks"]).parse_args(["clocks", *flags])
    cli._resolve(args)
    assert args.progress is shown


@pytest.mark.parametrize("argv, executor", [(["clocks"], "inline"), (["phase"], "process"), (["report"], "process"),
                                            (["phase", "--executor", "inline"], "inline"),
                                            (["--executor", "dask", "report"], "dask")])
def test_each_command_says_and_uses_its_default_executor(argv, executor):
    from implicitbias import cli

    parser = build_parser(argv)
    args = parser.parse_args(argv)
    cli._resolve(args)
    assert args.executor == executor
    if len(argv) == 1:
        assert f"(default: {executor})" in " ".join(LEAVES[(argv[0],)].format_help().split())
