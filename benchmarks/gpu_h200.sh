#!/usr/bin/env bash
# One 15-minute H200 window: throughput of a sigma_w group (batched vs one by one, TFLOP/s against
# the bf16 peak), then the gpu_h200 sweep (ResNet-9 on Fashion-MNIST, SGD vs Adam vs Muon vs
# SGD + L2, six sigma_w, bf16, channels_last) and its analysis.  Everything lands in $OUT.
#
#   OUT=out bash benchmarks/gpu_h200.sh                     # on the GPU machine
#   SPEC=tiny DEVICE=cpu SWEEP_SECONDS=120 OUT=/tmp/g \
#     BENCH_ARGS="--tier fashion_mnist_cpu --dataset digits --width 0.0625 --batch 32 --epochs 1" bash benchmarks/gpu_h200.sh   # CPU smoke test
#
# Fashion-MNIST: the four IDX .gz files are looked for where Debian's dataset-fashion-mnist puts
# them; if absent they are copied there from $FASHION_MNIST_DIR (default data/fashion-mnist, 30 MB,
# small enough to travel with the working tree).  The sweep is resumable: if the time limit
# (SWEEP_SECONDS) cuts it, the finished runs are kept and analysed, and a rerun continues.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-out}
SPEC=${SPEC:-gpu_h200}
DEVICE=${DEVICE:-cuda}
SWEEP_SECONDS=${SWEEP_SECONDS:-540}
BENCH_ARGS=${BENCH_ARGS:---tier fashion_mnist_cpu --train-size 10000 --width 1 --batch 128 --precision bf16 --epochs 1}
PY=${PYTHON:-python3}
mkdir -p "$OUT"

if ! "$PY" -c "import implicitbias" 2>/dev/null; then
    "$PY" -m pip install -q -e .   # keeps the CUDA torch already installed (torch>=2.3)
fi
FMNIST=/usr/share/datasets/fashion-mnist
if [ ! -f "$FMNIST/train-images-idx3-ubyte.gz" ]; then
    mkdir -p "$FMNIST" && cp "${FASHION_MNIST_DIR:-data/fashion-mnist}"/*-ubyte.gz "$FMNIST"/
fi
{ date -u; nvidia-smi --query-gpu=name,memory.total --format=csv 2>/dev/null || echo "no nvidia-smi"; } | tee "$OUT/machine.txt"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.cuda.is_available())" | tee -a "$OUT/machine.txt"

# 1. throughput of one sigma_w group, batched vs one by one (same device, same process)
"$PY" benchmarks/bench_batched.py --device "$DEVICE" --workers 1 --group 6 $BENCH_ARGS | tee "$OUT/bench_batched.txt"

# 2. the sweep (resumable; cut at SWEEP_SECONDS), 3. its analysis
set +e
timeout "$SWEEP_SECONDS" implicitbias --store "$OUT/store.sqlite" sweep "$SPEC" --device "$DEVICE" --no-progress 2>&1 | tee "$OUT/sweep.txt"
set -e
implicitbias --store "$OUT/store.sqlite" analyse "$SPEC" --out "$OUT/analysis" > "$OUT/analysis.txt"
tail -n 15 "$OUT/analysis.txt"
