"""The report writer: claims table, figures embedded in the HTML twin, verify's exit status."""

import base64
import types

import pytest

from implicitbias import report as report_mod
from implicitbias.claims import Claim, Evidence, Verdict
from implicitbias.cli import main
from implicitbias.figures import plt, save_figure


def _fake_claim(section, verdict, verify=True, claim_id="T0"):
    """A claim of ``section`` whose rule returns ``verdict`` and whose render draws a figure."""

    class Fake(Claim):
        id, statement, source, order = claim_id, "a fake claim", "nowhere", 0
        configs = {"default": None}

        def measure(self, ctx, config):
            return Evidence("none", {})

        def judge(self, evidence):
            return Verdict(verdict, "synthetic", "42")

        def render(self, ctx, evidence, v):
            fig, ax = plt.subplots()
            ax.plot([0, 1], [1, 0])
            png = save_figure(fig, ctx.path(f"{section}.png"), {"x": [0, 1], "y": [1, 0]})
            return f"![fig]({ctx.link(png)})"

    Fake.section, Fake.verify = section, verify
    return Fake()


@pytest.fixture
def fake_claims(monkeypatch):
    def install(*claims):
        sections = {c.section: types.SimpleNamespace(NAME=c.section, ORDER=99, TITLE=f"Fake {c.section}") for c in claims}
        monkeypatch.setattr(report_mod, "available_sections", lambda: sections)
        monkeypatch.setattr(report_mod, "registry", lambda: {c.id: c for c in claims})

    return install


def test_report_files_and_html_embedding(fake_claims, store, tmp_path):
    fake_claims(_fake_claim("alpha", "agrees"))
    built = report_mod.build_report(tmp_path / "out", store, progress=False)
    text = built.path.read_text()
    assert "| T0 | a fake claim | none | 42 | agrees | synthetic |" in text
    assert (tmp_path / "out/figures/alpha.png").is_file()
    assert (tmp_path / "out/figures/alpha.csv").read_text().splitlines() == ["x,y", "0,1", "1,0"]
    html = built.path.with_suffix(".html").read_text()
    png = (tmp_path / "out/figures/alpha.png").read_bytes()
    assert base64.b64encode(png).decode() in html and "figures/alpha.png" not in html


@pytest.mark.parametrize("verdict, status", [("agrees", 0), ("inconclusive", 0), ("disagrees", 1)])
def test_verify_exit_status(fake_claims, verdict, status, tmp_path, capsys):
    fake_claims(_fake_claim("beta", verdict), _fake_claim("slow", "disagrees", verify=False, claim_id="T1"))
    assert main(["--store", str(tmp_path / "s.sqlite"), "verify", "--no-progress"]) == status
    out = capsys.readouterr().out
    assert "a fake claim" in out and out.count("| T0 |") == 1 and "| T1 |" not in out  # T1 is not a verify claim


def test_bad_verdict_is_rejected():
    with pytest.raises(ValueError, match="verdict"):
        Verdict("maybe", "r", "m")
