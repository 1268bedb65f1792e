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
