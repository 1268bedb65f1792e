"""benchmarks/gpu_h200.sh end to end on a CPU at toy size (TINY=1): the same steps as on the H200
(throughput, sweep and analysis, clock-collapse sweep, C7 per family, calibrated law, predictions, and
a user's own loop with the meter, its runs imported and judged)."""

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow
def test_gpu_script_runs_on_cpu_at_tiny_scale(tmp_path):
    res = subprocess.run(["bash", str(ROOT / "benchmarks" / "gpu_h200.sh")], capture_output=True, text=True,
                         timeout=600, env={**os.environ, "TINY": "1", "OUT": str(tmp_path)})
    assert res.returncode == 0, res.stderr[-3000:]
    c7 = (tmp_path / "c7.txt").read_text().splitlines()
    assert len(c7) == 2 and all(line.startswith("| C7 |") for line in c7)  # sgd and adaptive families
    law = (tmp_path / "clock_law.json").read_text()
    assert '"sgd"' in law and '"adaptive"' in law
    predictions = (tmp_path / "predict.txt").read_text()
    assert predictions.count("governing clock:") == 3 and "prediction:" in predictions
    own = (tmp_path / "own_analysis.txt").read_text()  # a user's loop with the meter, imported and judged
    assert "6 trained elsewhere" in own and "6 recorded per step" in own
    assert (tmp_path / "own_claims.txt").read_text().startswith("| C1 |")
