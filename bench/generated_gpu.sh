#!/usr/bin/env bash
# Generated programs (bench/generate.py) reduced on the GPU machine's CPUs as on 2-core machines: GROUPS groups of
# seeds at once, each group pinned to two cores of its own (taskset), CUDA hidden, seeds one after another within
# a group (device tool: run from the repository root; results land in $OUT: summary.log, the lines of every
# seed, and results.tar, one log per group and one JSON per seed: the device returns only a few files).
# Usage: [SEED_TIMEOUT=S] [TOTAL_TIMEOUT=T] bash bench/generated_gpu.sh GROUPS SEED|case:NAME...  (case:NAME runs
# that corpus case with bench/corpus.py; S: seconds a seed or case may take, whole; T: seconds for the whole call,
# under the device's limit; a seed stopped by either prints no line, and what finished still comes back; set T below the call's own limit, which is the device budget left less a cold start when
# that is under 600 s: a call killed by the device packs nothing). The Inductor-pass seeds do not belong here: none of the eight tried on 2026-11-29
# (torch 2.11) finished within 540 s, where the 2-core VM reduces them in 90-260 s; run them with bench/generated.py.
set -uo pipefail
GROUPS_AT_ONCE=$1; shift
SEEDS=("$@")
WHEELS=$(ls -d .wheels ../shared/wheels shared/wheels 2>/dev/null | head -1)
python3 -m pip install -q --upgrade --no-index --no-deps --target /tmp/site "$WHEELS"/*.whl
export PYTHONPATH=/tmp/site:$PWD PYTHONUNBUFFERED=1 CUDA_VISIBLE_DEVICES=
OUT=${OUT:-/tmp/out}
RESULTS=$(mktemp -d)
mkdir -p "$RESULTS/json" "$OUT"
python3 -c "import torch, triton; print(torch.__version__, triton.__version__)" | tee "$RESULTS/group-0.log"
for ((g = 0; g < GROUPS_AT_ONCE; g++)); do
  (
    for ((i = g; i < ${#SEEDS[@]}; i += GROUPS_AT_ONCE)); do
      item=${SEEDS[$i]}
      if [[ $item == case:* ]]; then  # a corpus case (bench/corpus.py), e.g. case:triton_row_softmax
        bench=(bench/corpus.py --cases "${item#case:}" --json-out "$RESULTS/json/${item#case:}.json")
      else
        bench=(bench/generated.py --seeds "$item" --json "$RESULTS/json/seed-$item.json")
      fi
      timeout "${SEED_TIMEOUT:-0}" taskset -c $((2 * g)),$((2 * g + 1)) python3 "${bench[@]}" --venv "2.13.0=$(command -v python3)" \
        -j 2 2>&1 | grep -v "^\[" >> "$RESULTS/group-$g.log"
    done
  ) &
done
# Whatever finished is packed when the call's own time is up: an outer `timeout` would kill the packing too.
# (`[b]ench`: the pattern must not match this very command line.)
timeout "${TOTAL_TIMEOUT:-0}" bash -c 'while pgrep -f "[b]ench/(generated|corpus).py" > /dev/null; do sleep 5; done'
kill $(jobs -p) 2> /dev/null
(cd "$RESULTS" && tar cf "$OUT/results.tar" group-*.log json)
cat "$RESULTS"/group-*.log | grep -E "x,|same_bug|error|refused" | tee "$OUT/summary.log"
pkill -f "[b]ench/(generated|corpus).py"
