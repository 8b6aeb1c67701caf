#!/usr/bin/env bash
# Check-shape programs (corpus/cases/check_*) on the GPU machine, in parallel, each as bench/corpus.py runs a case
# (device tool: run from the repository root; results land in $OUT). Usage: bash bench/checks_gpu.sh MAX_TIME CASE...
set -uo pipefail
MAX_TIME=$1; shift
WHEELS=$(ls -d .wheels ../shared/wheels shared/wheels 2>/dev/null | head -1)
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$WHEELS"/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" | tee -a "$OUT/gpu.txt"
for case in "$@"; do
  python3 bench/corpus.py --cases "$case" --venv "2.13.0=$(command -v python3)" -j 4 --max-time "$MAX_TIME" \
    --json-out "$OUT/$case.json" > "$OUT/$case.log" 2>&1 &
done
wait
for case in "$@"; do grep -h "tokens\|error\|Error" "$OUT/$case.log" | tail -2; done
