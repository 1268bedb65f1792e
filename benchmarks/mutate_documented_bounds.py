"""Move each documented bound by 100x either way in a scratch copy of the package and check that a
test fails (issue 31: "every documented bound pinned").

The scratch copy lays the package out as it is installed (``implicitbias/`` with ``theory/``,
``numerics/`` and ``validation/`` inside it, the tests beside it) and is put first on PYTHONPATH,
ahead of the editable install, so the tests import the mutated copy; the checkout is never
touched.  For each bound the copy is first checked to pass unmutated, then each mutation
(``NAME = (value) * 100`` and ``NAME = (value) / 100``) must make ``BOUND_TESTS`` fail.

    python benchmarks/mutate_documented_bounds.py        # prints one line per mutation and the count
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LAYOUT = {"implicitbias": "implicitbias", "theory": "implicitbias/theory", "numerics": "implicitbias/numerics",
          "validation": "implicitbias/validation", "tests": "tests"}
BOUND_TESTS = ["tests/test_documented_bounds.py", "tests/test_store_paths.py"]
# (file in the scratch copy, the assignment's left-hand side as written there): the bounds the
# documentation states (docs/guarantees.md: Divergence, One error path, Strict specs, --dry-run means it, Leases,
# Conventions; the dynamics paragraph) and those issue 31 adds
BOUNDS = [
    ("implicitbias/validation/run.py", "LOSS_BOUND"),
    ("implicitbias/validation/run.py", "CHANCE_MARGIN"),
    ("implicitbias/validation/run.py", "WARMUP_FRACTION"),
    ("implicitbias/validation/run.py", "WARMUP_MIN_EPOCHS"),
    ("implicitbias/theory/clocks.py", "MAX_STEPS"),
    ("implicitbias/theory/clocks.py", "MAX_RATE"),
    ("implicitbias/validation/sweep.py", "MAX_RUNS"),
    ("implicitbias/validation/external.py", "MAX_CLASSES"),
    ("implicitbias/commands/dynamics.py", "MAX_DYNAMICS_K"),
    ("implicitbias/commands/__init__.py", "MIN_FREE_BYTES"),
    ("implicitbias/store/facade.py", "lease_seconds: float"),
    ("implicitbias/store/paths.py", "MAX_PATH_BYTES"),
    ("implicitbias/numerics/metrics/nc_metrics.py", "PINV_RTOL"),
]


def scratch_copy(folder: Path) -> None:
    for source, target in LAYOUT.items():
        shutil.copytree(ROOT / source, folder / target, dirs_exist_ok=True,
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", folder / "pyproject.toml")


def tests_pass(folder: Path) -> bool:
    env = {**os.environ, "PYTHONPATH": str(folder), "PYTHONDONTWRITEBYTECODE": "1"}
    cmd = [sys.executable, "-m", "pytest", *BOUND_TESTS, "-q", "-x", "-p", "no:randomly", "-p", "no:cacheprovider"]
    return subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True).returncode == 0


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        scratch_copy(folder)
        where = subprocess.run([sys.executable, "-c", "import implicitbias; print(implicitbias.__file__)"],
                               cwd=folder, env={**os.environ, "PYTHONPATH": str(folder)}, capture_output=True,
                               text=True).stdout
        assert where.startswith(tmp), f"the tests would import {where}, not the scratch copy"
        assert tests_pass(folder), "the unmutated copy must pass"
        caught = total = 0
        for name, lhs in BOUNDS:
            path = folder / name
            original = path.read_text()
            # the first assignment (or keyword default) of the name; its value runs to a comment, a comma,
            # a closing parenthesis or the end of the line
            line = re.compile(rf"({re.escape(lhs)}\s*=\s*)([^#\n,)]+?)(?=\s*(#|,|\)|$))", re.MULTILINE)
            found = line.search(original)
            assert found, f"{lhs} not found in {name}"
            for factor in ("* 100", "/ 100"):
                path.write_text(line.sub(lambda m: f"{m[1]}({m[2]}) {factor}", original, count=1))
                failed = not tests_pass(folder)
                caught += failed
                total += 1
                print(f"{lhs} = {found[2]} {factor}: {'a test fails' if failed else 'NOT CAUGHT'}", flush=True)
            path.write_text(original)
        print(f"{caught} of {total} mutations of {len(BOUNDS)} documented bounds make a test fail")
        return 0 if caught == total else 1


if __name__ == "__main__":
    sys.exit(main())
