"""The "Python API" blocks run as written, in a fresh interpreter without a store set up: the README's
short example and the longer tour on the documentation page *What you can run* (docs/running.md)."""

import os
import subprocess
import sys

import pytest
from readme_blocks import README, RUNNING, api_block


# docs/running.md's tour runs in the default tier inside a real kernel (tests/test_notebook.py): here only with -m slow
@pytest.mark.parametrize(
    "page", [README, pytest.param(RUNNING, marks=pytest.mark.slow)], ids=["README", "docs-running"]
)
def test_readme_python_api_section_runs_as_written(tmp_path, page):
    env = {k: v for k, v in os.environ.items() if k != "IMPLICITBIAS_STORE"}
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    env.update(HOME=str(tmp_path), MPLBACKEND="Agg", XDG_CACHE_HOME=str(tmp_path / "cache"), TMPDIR=str(temporary))
    work = tmp_path / "work"
    work.mkdir()
    script = work / "readme_api.py"
    script.write_text(api_block(page))
    done = subprocess.run([sys.executable, str(script)], cwd=work, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "NC suboptimal cross-polytope 3" in done.stdout
    assert (work / "phase_cells.csv").read_text().startswith("K,L,p,verdict")
    # the session store is temporary: nothing in the user's cache, nothing left in the folder but the CSV
    assert not (tmp_path / "cache" / "implicitbias").exists() and not any(temporary.iterdir())
    assert sorted(p.name for p in work.iterdir()) == ["phase_cells.csv", "readme_api.py"]
