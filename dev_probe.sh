#!/usr/bin/env bash
# usage: bash dev_probe.sh EXAMPLE "JOBS:MAXTIME:TIMEOUT ..."
set -uo pipefail
EX=$1; shift
python3 -m pip install -q --no-index --no-deps --target /tmp/site .wheels/*.whl
export PYTHONPATH=/tmp/site:$PWD
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/pycache
nvidia-smi --query-gpu=name --format=csv,noheader > "$OUT/gpu.txt"
( time python3 -c "import torch, torch._inductor.compile_fx, triton" ) >> "$OUT/gpu.txt" 2>&1
( time python3 -c "import torch, torch._inductor.compile_fx, triton" ) >> "$OUT/gpu.txt" 2>&1
git rev-parse --short HEAD >> "$OUT/gpu.txt"
for spec in $1; do
  IFS=: read J MT TO <<< "$spec"
  timeout "$TO" python3 bench/jobs_speedup.py "$EX" --only "$J" --max-time "$MT" --save-dir "$OUT" > "$OUT/speedup-j$J.txt" 2>&1
  echo "rc=$?" >> "$OUT/speedup-j$J.txt"
done
