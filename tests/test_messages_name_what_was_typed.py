"""Messages name what the user typed, derived quantities included (issue 31): the total step
count of ``clocks`` and ``predict`` is refused naming ``epochs`` (or ``n_train`` when one epoch is
already too long), never ``total_steps``, an option nobody gave."""

import re

import pytest

from implicitbias.cli import main

HUGE = "99999999999999999999999"


@pytest.mark.parametrize("command", ["clocks", "predict"])
@pytest.mark.parametrize("option, named", [("--epochs", "epochs"), ("--n-train", "n.train")])
def test_a_step_count_too_large_names_the_option_that_made_it(capsys, command, option, named):
    assert main([command, option, HUGE]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert re.search(rf"error: (--)?{named} must give at most 1e\+08 steps", line), line
    assert "total_steps" not in line and captured.out == ""
