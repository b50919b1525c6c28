#!/usr/bin/env bash
# jtorch's checks on a machine with an NVIDIA GPU (a lent device machine, README "GPU").
# Writes its logs under $OUT (default /tmp/gpu_check): env.txt, cuda_tests.txt (tests/
# test_cuda.py on the GPU), quickstart_*.txt (examples/quickstart.py, which picks the
# accelerator, under PyTorch and under jtorch, with wall times; QUICKSTART=0 skips them),
# suite.txt (the unit suite on a host whose jax backend is the GPU: CPU tensors beside it,
# for SUITE_SECONDS at most). Usage: bash tools/gpu_check.sh
set -u
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check}
PY=${PY:-python3}
[[ $PY == */* ]] && PY="$(cd "$(dirname "$PY")" && pwd)/$(basename "$PY")"
PER_TEST=""
$PY -c "import pytest_timeout" 2> /dev/null && PER_TEST="--timeout 150"
SUITE_SECONDS=${SUITE_SECONDS:-240}
mkdir -p "$OUT"
export PYTHONPATH=$PWD XLA_PYTHON_CLIENT_PREALLOCATE=false JTORCH_COMPILE_NOTE=0
unset PYTHONDONTWRITEBYTECODE

{
    nvidia-smi -L
    $PY -c "import jax, numpy, flax; print('jax', jax.__version__, 'numpy', numpy.__version__, 'flax', flax.__version__); print(jax.devices())"
    $PY -c "import jtorch as t; print('cuda', t.cuda.is_available(), t.cuda.device_count(), t.cuda.get_device_name(0), t.cuda.get_device_capability())"
} > "$OUT/env.txt" 2>&1

timeout 300 $PY -m pytest tests/test_cuda.py -q -p no:cacheprovider -p no:randomly -rfE \
    > "$OUT/cuda_tests.txt" 2>&1
echo "rc=$?" >> "$OUT/cuda_tests.txt"

cd examples
[[ ${QUICKSTART:-1} == 0 ]] || for run in "torch:$PY quickstart.py" "jtorch:$PY -m jtorch quickstart.py" "jtorch2:$PY -m jtorch quickstart.py"; do
    name=${run%%:*}
    start=$(date +%s%N)
    timeout 300 ${run#*:} > "$OUT/quickstart_$name.txt" 2>&1
    rc=$?
    echo "rc=$rc wall_ms=$(( ($(date +%s%N) - start) / 1000000 ))" >> "$OUT/quickstart_$name.txt"
done
cd ..

timeout -s INT "$SUITE_SECONDS" $PY -m pytest tests -n "${WORKERS:-12}" -q -p no:cacheprovider \
    -p no:randomly -rfE $PER_TEST > "$OUT/suite.txt" 2>&1
echo "rc=$?" >> "$OUT/suite.txt"
tail -n 4 "$OUT"/*.txt
