"""The report writer: claims table, figures embedded in the HTML twin, verify's exit status."""

import base64
import types

import pytest

from implicitbias import report as report_mod
from implicitbias.cli import main
from implicitbias.figures import plt, save_figure


def _fake_section(name, verdict, verify=True):
    mod = types.ModuleType(f"implicitbias.report.sections.{name}")
    mod.NAME, mod.ORDER, mod.TITLE, mod.VERIFY = name, 99, f"Fake {name}", verify

    def build(ctx):
        fig, ax = plt.subplots()
        ax.plot([0, 1], [1, 0])
        png = save_figure(fig, ctx.path(f"{name}.png"), {"x": [0, 1], "y": [1, 0]})
        claim = report_mod.Claim("T0", "a fake claim", "none", "42", verdict)
        return report_mod.Section(mod.TITLE, f"![fig]({ctx.link(png)})", [claim])

    mod.build = build
    return mod


@pytest.fixture
def fake_sections(monkeypatch):
    def install(*mods):
        monkeypatch.setattr(report_mod, "available_sections", lambda: {m.NAME: m for m in mods})

    return install


def test_report_files_and_html_embedding(fake_sections, store, tmp_path):
    fake_sections(_fake_section("alpha", "agrees"))
    built = report_mod.build_report(tmp_path / "out", store, progress=False)
    text = built.path.read_text()
    assert "| T0 | a fake claim | none | 42 | agrees |" in text
    assert (tmp_path / "out/figures/alpha.png").is_file()
    assert (tmp_path / "out/figures/alpha.csv").read_text().splitlines() == ["x,y", "0,1", "1,0"]
    html = built.path.with_suffix(".html").read_text()
    png = (tmp_path / "out/figures/alpha.png").read_bytes()
    assert base64.b64encode(png).decode() in html and "figures/alpha.png" not in html


@pytest.mark.parametrize("verdict, status", [("agrees", 0), ("inconclusive", 0), ("disagrees", 1)])
def test_verify_exit_status(fake_sections, verdict, status, tmp_path, capsys):
    fake_sections(_fake_section("beta", verdict), _fake_section("slow", "disagrees", verify=False))
    assert main(["--store", str(tmp_path / "s.sqlite"), "verify", "--no-progress"]) == status
    out = capsys.readouterr().out
    assert "a fake claim" in out and out.count("| T0 |") == 1  # the non-VERIFY section did not run


def test_bad_verdict_is_rejected():
    with pytest.raises(ValueError, match="verdict"):
        report_mod.Claim("T", "s", "c", "m", "maybe")
