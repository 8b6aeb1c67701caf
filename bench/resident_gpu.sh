#!/usr/bin/env bash
# Resident workers against processes of their own, on the GPU machine (device tool, from the repository root,
# wheels carried in .wheels/). Each SPEC is EXAMPLE:JOBS:RESIDENT (an examples/ file without .py, --jobs,
# --resident); each run lands in $OUT/EXAMPLE-jJOBS-RESIDENT/ (bench/jobs_speedup.py's run-jN.json and .log).
# Usage: bash bench/resident_gpu.sh MAX_TIME SPEC...   e.g. bash bench/resident_gpu.sh 150 liger_distill:8:auto
set -uo pipefail
MAX_TIME=$1
shift
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .wheels/*.whl || exit
export PYTHONPATH=/tmp/site:$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
for spec in "$@"; do
  IFS=: read -r name jobs resident <<< "$spec"
  timeout $((MAX_TIME + 150)) python3 bench/jobs_speedup.py "examples/$name.py" --only "$jobs" \
    --save-dir "$OUT/$name-j$jobs-$resident" --max-time "$MAX_TIME" -- --resident "$resident"
  python3 bench/resident_summary.py "$OUT/$name-j$jobs-$resident/run-j$jobs.json" | tee -a "$OUT/summary.txt"
done
