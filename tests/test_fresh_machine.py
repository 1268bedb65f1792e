"""A fresh machine: the default tier needs nothing outside the package and its pip dependencies.

Data installed outside the package (Debian's ``dataset-fashion-mnist``) are found through one
function, ``validation.data.system_data_path``, which ``IMPLICITBIAS_SYSTEM_DATA=0`` turns off
(``.ci/run`` sets it).  Reading a config, a spec or a claim's plan never touches data files;
where a tier's data are missing its claims are ``not run`` with where they were looked for and
how to get them, and the rest is still built.
"""

import tomllib

import pytest

from implicitbias.claims import Context, TIERS, evaluate, registry
from implicitbias.claims import forgetting as fg
from implicitbias.cli import main
from implicitbias.validation import data
from implicitbias.validation.sweep import packaged_specs


@pytest.fixture
def no_data_files(monkeypatch):
    """System data hidden, and any read of a data file or generated data set is a test failure."""
    monkeypatch.setenv(data.SYSTEM_DATA_ENV, "0")

    def touched(*args, **kwargs):
        raise AssertionError(f"data were loaded: {args}")

    monkeypatch.setattr(data, "_raw", touched)
    fg.experiment.cache_clear()
    yield
    fg.experiment.cache_clear()


def test_system_data_are_found_by_one_function_that_the_variable_turns_off(monkeypatch, tmp_path):
    monkeypatch.setitem(data._SYSTEM_DATA, "fashion_mnist", (tmp_path, "apt-get install dataset-fashion-mnist"))
    monkeypatch.delenv(data.SYSTEM_DATA_ENV, raising=False)
    assert data.system_data_path("fashion_mnist") == tmp_path and data.locate("fashion_mnist", None) == tmp_path
    assert data.system_data_path("mnist1d") is None and data.locate("mnist1d", None) is None
    monkeypatch.setenv(data.SYSTEM_DATA_ENV, "0")
    assert data.system_data_path("fashion_mnist") is None
    with pytest.raises(data.DataUnavailable, match=f"IMPLICITBIAS_SYSTEM_DATA=0 hides {tmp_path}.*apt-get install"):
        data.locate("fashion_mnist", None)
    assert data.locate("fashion_mnist", str(tmp_path)) == tmp_path  # a path given is used, hidden or not
    with pytest.raises(data.DataUnavailable, match="needs data_path"):
        data.locate("mnist", None)
    with pytest.raises(ValueError, match="data_path /dev/null for dataset mnist is not a file or folder"):
        data.locate("mnist", "/dev/null")


def test_configs_specs_and_plans_of_every_tier_touch_no_data(no_data_files):
    for name, path in packaged_specs().items():
        if tomllib.loads(path.read_text()).get("options", {}).get("device") != "cuda":  # GPU specs need a GPU
            assert fg.experiment(name).blocks
    for claim in registry().values():
        for tier in TIERS:
            claim.config(tier)
    for claim in (c for c in registry().values() if isinstance(c, fg.GroupClaim)):
        for tier in TIERS:
            for t, blocks in claim.config(tier).resolved() if isinstance(claim.config(tier), fg.Plan) else []:
                assert set(blocks) <= set(t.blocks)


@pytest.mark.parametrize("tier", ["full"])
def test_a_claim_whose_data_are_missing_is_not_run_naming_how_to_get_them(no_data_files, store, tier):
    from implicitbias.claims.forgetting.c6_deep_nets_fail_to_interpolate import CLAIM

    (result,) = evaluate(CLAIM, Context(store, tier=tier, progress=False))
    assert result.verdict.verdict == "not run" and result.evidence.label == "fashion_mnist"
    assert "apt-get install dataset-fashion-mnist" in result.verdict.reason and "data_path" in result.verdict.reason


def test_help_and_dry_runs_of_the_default_tier_need_no_data(no_data_files, monkeypatch, capsys, tmp_path):
    assert main(["report", "--help"]) == 0
    monkeypatch.undo()  # the default tier generates MNIST-1D: loading it is allowed, data files are not
    monkeypatch.setenv(data.SYSTEM_DATA_ENV, "0")
    assert main(["--store", str(tmp_path / "s.sqlite"), "sweep", "tiny", "--dry-run"]) == 0
    capsys.readouterr()
    assert main(["--store", str(tmp_path / "s.sqlite"), "sweep", "fashion_mnist_cpu", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "apt-get install dataset-fashion-mnist" in err and "Traceback" not in err


def test_ci_check_of_the_report_fails_on_a_missing_claim_or_an_error_row(tmp_path, monkeypatch):
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("check_report", Path(__file__).parents[1] / ".ci" / "check_report.py")
    check = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(check)
    monkeypatch.setattr(check, "registry", lambda: {"C1": None, "KL to NC (s. 4)": None})
    head = "# r\n\n## Claims\n\n| claim | statement | verdict | why |\n|---|---|---|---|\n"
    report = tmp_path / "report.md"
    for rows, status in [("| C1 (toy) | a \\| b | agrees | x |\n| KL to NC (s. 4) | s | not run | y |\n", 0),
                         ("| C1 (toy) | a | agrees | x |\n", 1),
                         ("| C1 (toy) | a | error | boom |\n| KL to NC (s. 4) | s | agrees | y |\n", 1)]:
        report.write_text(head + rows + "\ntext\n")
        assert check.main(str(report)) == status
