#!/usr/bin/env bash
# minimizer, shrinkray and pysource-minimize side by side on corpus cases, on the GPU machine's CPU cores (device
# tool: run from the repository root with .wheels and .wheels-cmp carried; results land in $OUT).
# Usage: bash bench/compare_device.sh [MAX_SECONDS] [CASES]   (CASES: comma-separated corpus case names)
set -uo pipefail
MAX_SECONDS=${1:-240}
CASES=${2:-cond_after_arctan,custom_op_wrong_fake,gradient_penalty_latents,linear_half_input,planted_fusion_pass,planted_gelu_lowering,triton_row_softmax}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --target /tmp/site .wheels/*.whl .wheels-cmp/pysource_minimize-*.whl
export PYTHONPATH=/tmp/site:$PWD
python3 -m venv bench/.venv-shrinkray
bench/.venv-shrinkray/bin/pip install -q --no-index --find-links .wheels-cmp shrinkray
EXAMPLES=$(echo "$CASES" | tr ',' '\n' | sed 's|^|corpus/cases/|; s|$|/program.py|' | paste -sd,)
RUNS=$(( $(echo "$CASES" | tr ',' '\n' | wc -l) * 3 ))
python3 bench/run.py --examples "$EXAMPLES" --tools minimizer,shrinkray,pysource-minimize --parallel "$RUNS" \
  --max-seconds "$MAX_SECONDS" --json-out "$OUT/compare.json" 2> "$OUT/compare.err" | tee "$OUT/compare.txt"
tail -n 30 "$OUT/compare.err"
