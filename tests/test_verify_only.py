"""``implicitbias verify --only SLUGS``: only the named claims run; a bad slug is one line, status 2."""

from implicitbias.cli import main


def test_verify_only_runs_the_named_claim(tmp_path, capsys):
    status = main(
        ["--store", str(tmp_path / "s.sqlite"), "verify", "--no-progress", "--only", "hadamard-diagonalisation-s-4"]
    )
    out = capsys.readouterr().out
    assert status == 0 and out.count("| Hadamard diagonalisation (s. 4) |") == 1
    assert "Theorem 3.1" not in out and out.rstrip().endswith("all 1 checked claims hold")


def test_verify_only_refuses_an_unknown_slug_in_one_line(tmp_path, capsys):
    status = main(["--store", str(tmp_path / "s.sqlite"), "verify", "--only", "theorem-3.1,theorem-9"])
    err = capsys.readouterr().err
    assert status == 2 and err.count("\n") == 1 and "only must be one of" in err and "theorem-9" in err


def test_verify_json_only_prints_the_error_row_of_a_claim_that_crashed(tmp_path, capsys, monkeypatch):
    """``--json`` always prints JSON on stdout, the crashed claim as an error row, as the full
    ``verify --json`` does; the crash is one line on stderr, status 2 (issue 31)."""
    import json

    import implicitbias.claims as claims

    def crash(claim, ctx):
        raise RuntimeError("the solver fell over")

    monkeypatch.setattr(claims, "evaluate", crash)
    status = main(["--store", str(tmp_path / "s.sqlite"), "verify", "--json", "--only", "theorem-3.1"])
    captured = capsys.readouterr()
    (row,) = json.loads(captured.out)
    assert status == 2 and row["claim"] == "Theorem 3.1" and row["verdict"] == "error"
    (line,) = captured.err.strip().splitlines()
    assert "claim Theorem 3.1 failed to compute: RuntimeError: the solver fell over" in line
