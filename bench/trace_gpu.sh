#!/usr/bin/env bash
# Corpus cases reduced on the GPU machine with every accepted step kept (bench/trace_steps.py), once per resident
# mode, all at once (device tool: run from the repository root; results land in $OUT/traces.tar: per case and mode
# the steps folder, the report, the repro and the log). Usage: bash bench/trace_gpu.sh MAX_TIME MODES CASE...
# (MODES: comma-separated --resident values, e.g. auto,never).
set -uo pipefail
MAX_TIME=$1; MODES=$2; shift 2
WHEELS=$(ls -d .wheels ../shared/wheels shared/wheels 2>/dev/null | head -1)
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$WHEELS"/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/out}
RESULTS=$(mktemp -d)
ROOT=$PWD
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$RESULTS/gpu.txt"
for case in "$@"; do
  for mode in ${MODES//,/ }; do
    run="$RESULTS/$case-$mode"
    mkdir -p "$run/work"
    cp "corpus/cases/$case/program.py" "$run/work/"
    (cd "$run/work" && STEPS_DIR="$run/steps" timeout $((MAX_TIME + 120)) python3 "$ROOT/bench/trace_steps.py" reduce program.py \
      -o "$run/out.py" --report "$run/report.json" -q -j 4 --resident "$mode" --max-time "$MAX_TIME" > "$run/log.txt" 2>&1) &
  done
done
wait
(cd "$RESULTS" && rm -rf ./*/work && tar cf "$OUT/traces.tar" .)
for run in "$RESULTS"/*/; do echo "$(basename "$run"): $(ls "$run/steps" 2>/dev/null | wc -l) steps; $(head -c 300 "$run/out.py" | grep size)"; done
