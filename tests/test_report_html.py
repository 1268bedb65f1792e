"""The HTML report as people read it: math rendered offline (MathML), a contents list linking
every section and claim, verdict badges that keep the word, every figure embedded and decodable;
and the same page opened in a real browser (headless Chromium, where installed)."""

import base64
import io
import re
import types

import browser
import pytest
from fake_claims import fake_claim, install

from implicitbias import report as report_mod

TEX = (
    r"A flow: $$ \frac{d \theta}{dt} = -\frac{d}{d \theta} L{\left(\theta \right)} \\ \frac{d x}{dt} = x_{1}^{2} $$"
    r" and, inline, $\sigma_1 \sigma_2 \geq 1$; it costs $5, and `$$ in code $$` stays as written."
)


@pytest.fixture
def page(monkeypatch, store, tmp_path):
    """report.html of three fake claims (agrees, disagrees, not run), the first rendering TeX."""
    claims = [
        fake_claim("alpha", "agrees"),
        fake_claim("beta", "disagrees", claim_id="T1"),
        fake_claim("beta", "not run", claim_id="T2"),
    ]
    drawn = claims[0].render
    claims[0].render = lambda ctx, ev, v: drawn(ctx, ev, v) + "\n\n" + TEX
    install(monkeypatch, *claims)
    built = report_mod.build_report(tmp_path / "out", store, progress=False)
    return built.path.with_suffix(".html")


def _text_outside_code(html: str) -> str:
    return re.sub(r"<code[^>]*>.*?</code>", "", html, flags=re.S)


def test_math_is_mathml_and_no_tex_delimiters_remain(page):
    html = page.read_text()
    assert html.count('<math xmlns="http://www.w3.org/1998/Math/MathML" display="block">') == 2  # one per line
    assert html.count('display="inline"') == 1
    assert "$$" not in _text_outside_code(html) and "<code>$$ in code $$</code>" in html
    assert "costs $5" in html  # a dollar amount is not math
    assert "<mfrac>" in html and "&#x003B8;" in html  # \frac and \theta converted
    # self-contained: nothing fetched, no script
    assert not re.search(r'(src|href)="(https?:)?//', html) and "<link" not in html and "<script" not in html


def test_tex_that_cannot_be_converted_is_shown_as_code_without_dollars():
    html = report_mod._mathml(r"\unknowncommand{x", True)
    assert "$" not in html and ("<math" in html or '<code class="tex">' in html)


def test_contents_links_every_section_and_claim(page):
    html = page.read_text()
    nav = re.search(r'<nav class="contents">(.*?)</nav>', html, flags=re.S).group(1)
    ids = set(re.findall(r' id="([^"]+)"', html))
    targets = re.findall(r'href="#([^"]+)"', nav)
    assert targets and set(targets) <= ids
    names = re.findall(r">([^<]+)</a>", nav)
    assert {"Claims", "Fake alpha", "Fake beta", "T0: a fake claim", "T1: a fake claim", "T2: a fake claim"} <= set(
        names
    )
    # the claims table's names link to the claims
    assert re.search(r'<td><a href="#t1-a-fake-claim">T1</a></td>', html)
    assert all(t in ids for t in re.findall(r'href="#([^"]+)"', html))


def test_verdicts_are_badges_that_keep_the_word(page):
    html = page.read_text()
    for word, css in (("agrees", "agrees"), ("disagrees", "disagrees"), ("not run", "not-run")):
        assert f'<td><span class="verdict verdict-{css}">{word}</span></td>' in html
        assert f".verdict-{css} {{" in html


def _data_uris(html: str) -> list[bytes]:
    return [base64.b64decode(b) for b in re.findall(r'src="data:image/png;base64,([^"]+)"', html)]


def test_every_figure_is_embedded_and_decodes(page):
    from PIL import Image

    html = page.read_text()
    images = _data_uris(html)
    assert len(images) == 3 and 'src="figures/' not in html
    for data in images:
        with Image.open(io.BytesIO(data)) as im:
            im.verify()
        with Image.open(io.BytesIO(data)) as im:
            assert im.size[0] > 10 and im.size[1] > 10


PROBE = """<script>
window.addEventListener('load', () => {
  const maths = [...document.getElementsByTagName('math')];
  const text = document.body.cloneNode(true);
  text.querySelectorAll('code, script').forEach(e => e.remove());
  const probe = {
    raw_tex: (text.textContent.match(/[$][$]/g) || []).length,
    maths: maths.length,
    mathml: maths.every(m => m instanceof MathMLElement && m.getBoundingClientRect().width > 0),
    images: [...document.images].map(i => [i.complete, i.naturalWidth, i.naturalHeight]),
    badges: [...document.querySelectorAll('.verdict')].map(b => [b.innerText, getComputedStyle(b).backgroundColor]),
    links: [...document.querySelectorAll('nav.contents a')].map(a => !!document.getElementById(a.hash.slice(1))),
  };
  const out = document.createElement('pre');
  out.id = 'probe';
  out.textContent = JSON.stringify(probe);
  document.body.appendChild(out);
});
</script>"""


@browser.needs_chromium
def test_report_in_a_real_browser(page, tmp_path):
    """Headless Chromium renders report.html: no raw $$ in the rendered text outside code spans,
    every formula is a MathML element with a size, every image decodes, every
    badge keeps its word and has a colour, every contents link has its target."""
    probe = types.SimpleNamespace(
        **browser.probe(page.read_text(), PROBE, tmp_path / "probed.html", tmp_path / "profile")
    )
    assert probe.raw_tex == 0
    assert probe.maths == 3 and probe.mathml
    assert len(probe.images) == 3 and all(ok and w > 10 and h > 10 for ok, w, h in probe.images)
    words = [w for w, _ in probe.badges]
    assert {"agrees", "disagrees", "not run"} <= set(words)
    assert len({colour for _, colour in probe.badges}) >= 3  # each verdict its own colour
    assert probe.links and all(probe.links)
