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
