"""Fake claims and sections for tests of the report writer and the CLI's error path.

``fake_claim(section, verdict)`` is a real ``Claim`` whose rule returns ``verdict`` and whose
render draws one figure (with its CSV); ``install(monkeypatch, *claims, exhibits={})`` makes
them the report's only claims, each section layout only (an ``exhibit`` where given).
"""

import types

from implicitbias.claims import Claim, Evidence, Verdict
from implicitbias.figures import save_figure, subplots


def fake_claim(section, verdict="agrees", *, claim_id="T0", verify=True, measure=None):
    class Fake(Claim):
        id, statement, source, order = claim_id, "a fake claim", "nowhere", 0
        configs = {"default": None}

        def measure(self, ctx, config):
            return Evidence("none", {})

        def judge(self, evidence):
            return Verdict(verdict, "synthetic", "42")

        def render(self, ctx, evidence, v):
            fig, ax = subplots()
            ax.plot([0, 1], [1, 0])
            png = save_figure(fig, ctx.path(f"{section}.png"), {"x": [0, 1], "y": [1, 0]})
            return f"![fig]({ctx.link(png)})"

    Fake.section, Fake.verify = section, verify
    claim = Fake()
    if measure is not None:
        claim.measure = measure
    return claim


def install(monkeypatch, *claims, exhibits=None):
    import implicitbias.claims as claims_module
    import implicitbias.report as report

    sections = {c.section: types.SimpleNamespace(NAME=c.section, ORDER=99, TITLE=f"Fake {c.section}") for c in claims}
    for name, exhibit in (exhibits or {}).items():
        sections[name].exhibit = exhibit
    monkeypatch.setattr(report, "available_sections", lambda: sections)
    monkeypatch.setattr(report, "registry", lambda: {c.id: c for c in claims})
    monkeypatch.setattr(claims_module, "registry", lambda: {c.id: c for c in claims})  # verify's, by slug
