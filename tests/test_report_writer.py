"""The report writer: claims table, figures embedded in the HTML twin, verify's exit status."""

import base64

import pytest
from fake_claims import fake_claim, install

from implicitbias import report as report_mod
from implicitbias.claims import Verdict
from implicitbias.cli import main


def test_report_files_and_html_embedding(monkeypatch, store, tmp_path):
    install(monkeypatch, fake_claim("alpha", "agrees"))
    built = report_mod.build_report(tmp_path / "out", store, progress=False)
    text = built.path.read_text()
    assert "| T0 | a fake claim | none | 42 | agrees | synthetic |" in text
    assert (tmp_path / "out/figures/alpha.png").is_file()
    assert (tmp_path / "out/figures/alpha.csv").read_text().splitlines() == ["x,y", "0,1", "1,0"]
    html = built.path.with_suffix(".html").read_text()
    png = (tmp_path / "out/figures/alpha.png").read_bytes()
    assert base64.b64encode(png).decode() in html and "figures/alpha.png" not in html


@pytest.mark.parametrize("verdict, status", [("agrees", 0), ("inconclusive", 0), ("disagrees", 1)])
def test_verify_exit_status(monkeypatch, verdict, status, tmp_path, capsys):
    """1 only for a disagreeing claim; claims not marked ``verify`` do not run."""
    install(monkeypatch, fake_claim("beta", verdict), fake_claim("slow", "disagrees", verify=False, claim_id="T1"))
    assert main(["--store", str(tmp_path / "s.sqlite"), "verify", "--no-progress"]) == status
    captured = capsys.readouterr()
    assert captured.err == ""
    assert "a fake claim" in captured.out and captured.out.count("| T0 |") == 1 and "| T1 |" not in captured.out


def test_bad_verdict_is_rejected():
    with pytest.raises(ValueError, match="verdict"):
        Verdict("maybe", "r", "m")


def _crash(*_):
    raise ZeroDivisionError("division by zero in the check")


@pytest.mark.parametrize("where", ["measure", "exhibit"])
def test_one_bad_section_costs_only_itself(monkeypatch, tmp_path, capsys, where):
    """A claim or exhibit that raises: the report is still written with every other section, the
    failed claim's row says ``error`` with the one-line cause, and the command exits 2 naming it."""
    bad = fake_claim("bad", claim_id="T1", measure=_crash if where == "measure" else None)
    install(monkeypatch, fake_claim("alpha", "agrees"), bad, fake_claim("omega", "disagrees", claim_id="T2"),
            exhibits={"bad": _crash} if where == "exhibit" else {})
    out = tmp_path / "out"
    assert main(["--store", str(tmp_path / "s.sqlite"), "report", "--executor", "inline", "--no-progress",
                 "--out", str(out)]) == 2
    err = capsys.readouterr().err
    failed = "claim T1" if where == "measure" else "section bad"
    assert err.count("\n") == 1 and f"{failed} failed to compute: ZeroDivisionError" in err and str(out) in err
    text = (out / "report.md").read_text()
    assert "| T0 | a fake claim | none | 42 | agrees | synthetic |" in text
    assert "| T2 | a fake claim | none | 42 | disagrees | synthetic |" in text
    assert ("| T1 | a fake claim | - | - | error | claim T1 failed to compute: ZeroDivisionError" in text) == (where == "measure")
    assert "## Fake omega" in text and (out / "figures/omega.png").is_file() and (out / "report.html").is_file()
