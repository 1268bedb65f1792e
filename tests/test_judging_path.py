"""One judging path (issue 29 items 2 and 5): ``ib.check``, ``implicitbias verify`` and the report judge
a claim through ``claims.judging.judge_claim``, so a claim whose computation crashes is the same one
line from all three; the claims table has one writer; judging never changes the claim it judges."""

from dataclasses import dataclass

import fake_claims
import pytest

import implicitbias as ib
from implicitbias.claims import Evidence, Threshold, Verdict
from implicitbias.claims import table as claims_table
from implicitbias.claims.forgetting.group_claim import GroupClaim
from implicitbias.claims.judging import ClaimError
from implicitbias.cli import main
from implicitbias.report import build_report
from implicitbias.validation.analysis import Group


def _crash(*_):
    raise ZeroDivisionError("the solver fell over")


def test_a_crash_is_the_same_line_from_check_verify_and_the_report(monkeypatch, capsys, store, tmp_path):
    fake_claims.install(monkeypatch, fake_claims.fake_claim("fake", measure=_crash))
    line = "claim T0 failed to compute: ZeroDivisionError: the solver fell over"
    with pytest.raises(ClaimError) as raised:
        ib.check("t0", store=store)
    assert str(raised.value) == line and isinstance(raised.value.__cause__, ZeroDivisionError)
    assert main(["--store", str(tmp_path / "v.sqlite"), "verify", "--no-progress"]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip().endswith(line) and f"| T0 | a fake claim | - | - | error | {line} |" in captured.out
    built = build_report(tmp_path / "out", store, progress=False)
    assert built.errors == [line] and [r.verdict for r in built.claims] == ["error"]


def test_verify_out_keeps_the_claims_table_in_markdown_and_csv(monkeypatch, capsys, tmp_path):
    """``verify --out`` writes the claims table its one writer writes (``claims.table``): the Markdown
    it prints and the CSV of ``claims.csv``, and no report page."""
    fake_claims.install(monkeypatch, fake_claims.fake_claim("fake", "disagrees"))
    assert main(["--store", str(tmp_path / "v.sqlite"), "verify", "--no-progress", "--out", str(tmp_path / "out")]) == 1
    printed = capsys.readouterr().out
    table = (tmp_path / "out" / "claims.md").read_text().strip()
    assert table in printed and "| T0 | a fake claim | none | 42 | disagrees | synthetic |" in table
    assert (tmp_path / "out" / "claims.csv").read_text().splitlines()[0] == ",".join(claims_table.COLUMNS)
    assert not (tmp_path / "out" / "report.html").exists()


@dataclass(frozen=True)
class _Seeds:
    n: int
    halves: list | None = None


class _Simulated(GroupClaim):
    """A group claim whose rule notes the simulation count it was judged with, and that of the shared
    instance at that moment."""

    id, statement, source, section = "S0", "a simulated claim", "nowhere", "fake"
    thresholds = {"min_seeds": Threshold(2, "complete seeds a group needs in this test")}
    oc_sims = 400

    def __init__(self):
        self.seen = []

    def evidence(self, groups, label=""):
        return Evidence("seeds", _Seeds(sum(len(g.runs) for g in groups)), label)

    def judge(self, evidence):
        self.seen.append((self.oc_sims, CLAIM.oc_sims))
        return Verdict("agrees", "synthetic", str(evidence.data.n))


CLAIM = _Simulated()


def test_judging_the_seed_halves_leaves_the_claim_as_it_was():
    """The halves are judged without simulation, by a copy: the shared claim keeps its ``oc_sims``
    throughout (another thread judging it meanwhile would simulate as asked), and nothing is stored
    on it."""
    runs = [({"sigma_w": s, "seed": seed}, {}) for s in (0.5, 2.0) for seed in range(6)]
    before = dict(vars(CLAIM))
    (evidence,) = CLAIM.stable_evidences([Group({"optimizer": "sgd"}, runs)])
    assert [seeds for seeds, _ in evidence.data.halves] == [[0, 1, 2], [3, 4, 5]]
    assert [verdict for _, verdict in evidence.data.halves] == ["agrees", "agrees"]
    assert CLAIM.oc_sims == 400 and vars(CLAIM).keys() == before.keys()
    CLAIM.judge(evidence)
    assert CLAIM.seen == [(0, 400), (0, 400), (400, 400)]
