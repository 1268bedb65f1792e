#!/usr/bin/env bash
# At most 9.5 minutes of an H200: throughput of an ensemble of two optimiser settings that share a step
# (batched vs one by one, TFLOP/s against the bf16 peak), then the gpu_h200 sweep (ResNet-9 on all of
# Fashion-MNIST, SGD vs Adam vs Muon vs SGD + L2, five sigma_w x three seeds, bf16, channels_last, data
# held on the device, ensembles of 15 runs) and its analysis (C1, C3, C4), then the clock-collapse grid
# gpu_h200_collapse (issue 12: per family three clock levels, each at 1 and 4 epochs, four sigma_w x
# three seeds on 20k images) with its analysis (C7 per family), the clock law calibrated on it and
# `implicitbias predict` on the paper's recipes with that law.  Every spec has >= 3 seeds per sigma_w
# and is judged by the same rules as the toy tier.  Last, a user's own recipe (issue 32): the plain
# training loop of benchmarks/own_loop.py with the ForgettingMeter (ResNet-9 on CIFAR-10 where
# CIFAR10_PATH names its archive or folder, else on Fashion-MNIST), its runs written to a CSV file,
# imported (`implicitbias import`) and judged (`implicitbias analyse`) like any file of runs trained
# elsewhere; OWN_SECONDS (default 60) cuts the grid, keeping the runs that finished; OWN_ARGS
# replaces the recipe (e.g. "--epochs 200 --sigma-w 0.1,0.5,1,2.5" for the paper's).  Everything lands in $OUT.
#
#   OUT=out bash benchmarks/gpu_h200.sh                     # on the GPU machine
#   TINY=1 OUT=/tmp/g bash benchmarks/gpu_h200.sh           # CPU smoke test of the same path, a minute
#
# Fashion-MNIST: the four IDX .gz files are looked for where Debian's dataset-fashion-mnist puts
# them; if absent they are copied there from $FASHION_MNIST_DIR (default data/fashion-mnist, 30 MB,
# small enough to travel with the working tree).  The sweep is resumable: if the time limit
# (SWEEP_SECONDS) cuts it, the finished runs are kept and analysed, and a rerun continues.
# Time budget (H200): setup and throughput about 1 min, SWEEP_SECONDS 200 (C1/C3/C4: 9.9M training images),
# COLLAPSE_SECONDS 200 (C7: 10.8M), analyses, calibration and predictions under 1 min, OWN_SECONDS 60 and its
# import and analysis (under half a minute).  Both sweeps are
# cut into ensembles of one block each (max_members), so a cut keeps every finished block.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
if [ -n "${TINY:-}" ]; then  # the same steps on a CPU at toy size
    SPEC=gpu_h200_tiny COLLAPSE_SPEC=gpu_h200_collapse_tiny DEVICE=cpu SWEEP_SECONDS=300 COLLAPSE_SECONDS=300
    BENCH_ARGS="--epochs 2 --blocks sgd_low,adam --group 24"  # the toy tier's MLP blocks: 20 + 4 runs
    OWN_SECONDS=${OWN_SECONDS:-300}
    OWN_ARGS="--dataset digits --val-size 150 --width 0.125 --epochs 2 --sigma-w 0.5,2 --seeds 0,1,2 --recipes sgd:0.01 --threads 1"
fi
if [ -n "${CIFAR10_PATH:-}" ]; then
    OWN_DATA="--dataset cifar10 --data-path $CIFAR10_PATH"
else
    OWN_DATA="--dataset fashion_mnist"
fi
OWN_SECONDS=${OWN_SECONDS:-60}
OWN_ARGS=${OWN_ARGS:-$OWN_DATA --train-size 10000 --epochs 4 --sigma-w 0.5,2 --seeds 0,1,2 --recipes sgd:0.01,adam:0.001}
SPEC=${SPEC:-gpu_h200}
COLLAPSE_SPEC=${COLLAPSE_SPEC:-gpu_h200_collapse}
DEVICE=${DEVICE:-cuda}
SWEEP_SECONDS=${SWEEP_SECONDS:-200}
COLLAPSE_SECONDS=${COLLAPSE_SECONDS:-200}
BENCH_ARGS=${BENCH_ARGS:---tier fashion_mnist_cpu --blocks sgd_low,adam --train-size 10000 --width 1 --batch 128 --precision bf16 --epochs 1}
PY=${PYTHON:-python3}
mkdir -p "$OUT"

if ! "$PY" -c "import implicitbias" 2>/dev/null; then
    "$PY" -m pip install -q -e .   # keeps the CUDA torch already installed (torch>=2.3)
fi
FMNIST=/usr/share/datasets/fashion-mnist
if [ -z "${TINY:-}" ] && [ ! -f "$FMNIST/train-images-idx3-ubyte.gz" ]; then  # the TINY specs need no data
    mkdir -p "$FMNIST" && cp "${FASHION_MNIST_DIR:-data/fashion-mnist}"/*-ubyte.gz "$FMNIST"/
fi
{ date -u; nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null || echo "no nvidia-smi"; } | tee "$OUT/machine.txt"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/machine.txt"

# 1. throughput of an ensemble of two settings (9 + 3 runs), batched vs one by one (same device, same process)
# shellcheck disable=SC2086  # BENCH_ARGS is a list of options
"$PY" benchmarks/bench_batched.py --device "$DEVICE" --workers 1 --group 12 $BENCH_ARGS | tee "$OUT/bench_batched.txt"

# 2. the sweep (resumable; cut at SWEEP_SECONDS), 3. its analysis
set +e
timeout "$SWEEP_SECONDS" implicitbias --store "$OUT/store.sqlite" sweep "$SPEC" --device "$DEVICE" --no-progress 2>&1 | tee "$OUT/sweep.txt"
set -e
implicitbias --store "$OUT/store.sqlite" analyse "$SPEC" --out "$OUT/analysis" > "$OUT/analysis.txt"
tail -n 15 "$OUT/analysis.txt"

# 4. the clock-collapse grid (resumable; cut at COLLAPSE_SECONDS), its analysis (C7 per family), the
# law calibrated on it, and predictions for the paper's recipes (ResNet-9, b 128, 200 epochs, 50k images)
set +e
timeout "$COLLAPSE_SECONDS" implicitbias --store "$OUT/store.sqlite" sweep "$COLLAPSE_SPEC" --device "$DEVICE" --no-progress 2>&1 | tee "$OUT/sweep_collapse.txt"
set -e
implicitbias --store "$OUT/store.sqlite" analyse "$COLLAPSE_SPEC" --out "$OUT/analysis_collapse" > "$OUT/analysis_collapse.txt"
grep "^| C7" "$OUT/analysis_collapse/analysis.md" | tee "$OUT/c7.txt"
"$PY" benchmarks/calibrate_clock_law.py --store "$OUT/store.sqlite" --workers 1 --specs "$COLLAPSE_SPEC" \
    --out "$OUT/clock_law.json" | tee "$OUT/calibration.txt"
for recipe in "--optimizer sgd --lr 0.01" "--optimizer adam --lr 0.001" "--optimizer sgd --lr 0.01 --weight-decay 5e-4"; do
    # shellcheck disable=SC2086  # the recipe is a list of options
    implicitbias predict $recipe --batch-size 128 --epochs 200 --n-train 50000 --law "$OUT/clock_law.json"
done | tee "$OUT/predict.txt"

# 5. a user's own recipe: a plain loop with the meter -> runs file -> import -> analyse (its own store);
# shellcheck disable=SC2086  # OWN_ARGS is a list of options
"$PY" benchmarks/own_loop.py $OWN_ARGS --device "$DEVICE" --seconds "$OWN_SECONDS" --out "$OUT/own" | tee "$OUT/own_loop.txt"
implicitbias --store "$OUT/own/store.sqlite" import "$OUT/own/runs.csv" | tee "$OUT/own_import.txt"
implicitbias --store "$OUT/own/store.sqlite" analyse --out "$OUT/own/analysis" > "$OUT/own_analysis.txt"
grep "^| C[0-9]" "$OUT/own/analysis/analysis.md" | cut -c1-400 | tee "$OUT/own_claims.txt"
