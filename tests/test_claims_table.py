"""The claims table's one writer (``implicitbias.claims.table``): the report writes ``claims.csv``
with one row per verdict, its Markdown numbers table shows the same numbers, and
``implicitbias verify --json`` prints the same records."""

import csv
import json
import math
import types

import fake_claims

from implicitbias.claims import Claim, Evidence, Verdict
from implicitbias.claims import table as claims_table
from implicitbias.claims.forgetting.memory_rules import Estimate
from implicitbias.cli import main
from implicitbias.report import build_report

ESTIMATE = Estimate("memory ratio r", 0.25, 0.1, 0.35, 0.953, 8, 0.0021, 0.004, 0.012, 0.3, None, "interpolating",
                    "10 11 12 13 14 15 16 17")


def numbered_claim(section="fake", claim_id="S1", estimate=ESTIMATE):
    class Numbered(Claim):
        id, statement, source, order, verify = claim_id, "a claim with numbers", "nowhere", 1, True
        configs = {"default": None}

        def measure(self, ctx, config):
            return Evidence("none", {})

        def judge(self, evidence):
            return Verdict("agrees", "synthetic", "0.25", {"estimate": estimate})

    Numbered.section = section
    return Numbered()


def test_report_writes_claims_csv_one_row_per_claim_with_the_numbers(monkeypatch, store, tmp_path):
    fake_claims.install(monkeypatch, fake_claims.fake_claim("fake", "disagrees"), numbered_claim())
    built = build_report(tmp_path / "out", store, progress=False)
    with (tmp_path / "out" / "claims.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert list(rows[0]) == list(claims_table.COLUMNS)
    by_id = {r["claim"]: r for r in rows}
    assert set(by_id) == {"T0", "S1"} and by_id["T0"]["verdict"] == "disagrees" and by_id["T0"]["estimate"] == ""
    s1 = by_id["S1"]
    assert (float(s1["estimate"]), float(s1["lo"]), float(s1["hi"]), int(s1["n_seeds"])) == (0.25, 0.1, 0.35, 8)
    assert (float(s1["p_agrees_if_false"]), float(s1["p_disagrees_if_true"])) == (0.004, 0.012)
    assert s1["checkpoint"] == "interpolating" and s1["seeds_needed"] == ""
    text = built.path.read_text()
    assert "| S1 | agrees | memory ratio r | 0.25 [0.1, 0.35] | 0.953 | 8 | 0.0021 | 0.004 | 0.012 | 0.3 |" in text


def test_missing_numbers_are_empty_not_nan():
    row = types.SimpleNamespace(claim="X", verdict="agrees", estimate=Estimate("q", math.nan, 0.0, 1.0))
    record = claims_table.records([row])[0]
    assert record.estimate is None and record.lo == 0.0 and record.p is None and record.n_seeds is None


def test_verify_json_prints_the_same_records(monkeypatch, capsys, tmp_path):
    fake_claims.install(monkeypatch, numbered_claim())
    assert main(["verify", "--json", "--out", str(tmp_path / "out")]) == 0
    printed = json.loads(capsys.readouterr().out)
    with (tmp_path / "out" / "claims.csv").open() as fh:
        row = next(csv.DictReader(fh))
    assert printed[0]["claim"] == row["claim"] == "S1"
    assert printed[0]["estimate"] == float(row["estimate"]) and printed[0]["n_seeds"] == int(row["n_seeds"])
    assert printed[0]["p_disagrees_if_true"] == 0.012 and set(printed[0]) == set(claims_table.COLUMNS)


def test_rows_carry_slug_paper_text_and_the_verdicts_numbers(monkeypatch, capsys, store, tmp_path):
    """claims.csv and verify --json join with ``ib.check``/``verify --only`` (slug) and carry the
    statement, what was measured, the reason, and a theorem check's numbers (a JSON object)."""
    from implicitbias.claims import slug

    class Gap(Claim):
        id, statement, source, order, verify = "Theorem 9.9", "the gap closes", "nowhere", 1, True
        section, configs = "fake", {"default": None}

        def measure(self, ctx, config):
            return Evidence("none", {})

        def judge(self, evidence):
            return Verdict("agrees", "the gap is below the tolerance", "gap 3e-09",
                           {"gap": 3e-09, "tolerance": 1e-06, "K": [4, 8], "nan": math.nan})

    fake_claims.install(monkeypatch, Gap())
    build_report(tmp_path / "out", store, progress=False)
    with (tmp_path / "out" / "claims.csv").open() as fh:
        (row,) = list(csv.DictReader(fh))
    assert (row["slug"], row["statement"], row["measured"], row["reason"]) == (
        slug("Theorem 9.9"), "the gap closes", "gap 3e-09", "the gap is below the tolerance")
    assert row["slug"] == "theorem-9.9" and row["paper"] == "test_claims_table"  # a claim outside depth/forgetting
    assert json.loads(row["numbers"]) == {"gap": 3e-09, "tolerance": 1e-06, "K": [4, 8], "nan": None}
    assert main(["verify", "--json", "--out", str(tmp_path / "again")]) == 0
    (printed,) = json.loads(capsys.readouterr().out)
    assert {k: printed[k] for k in ("slug", "paper", "statement", "measured", "reason")} == {
        k: row[k] for k in ("slug", "paper", "statement", "measured", "reason")}


def test_every_packaged_claim_names_its_paper():
    from implicitbias.claims import registry

    papers = {c.id: c.paper for c in registry().values()}
    assert set(papers.values()) == {"A", "B"}
    assert papers["Theorem 3.1"] == "A" and papers["C1"] == "B"
