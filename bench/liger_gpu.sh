#!/usr/bin/env bash
# The liger-kernel example on the GPU machine: plain python, check, and a reduction at -j 8 (device tool:
# run from the repository root; results land in $OUT). Usage: bash bench/liger_gpu.sh [MAX_TIME]
# REDUCE_ONLY=1 skips plain python, the hand repro and check (measured before) to give the reduction the time.
set -uo pipefail
MAX_TIME=${1:-420}
WHEELS=$(ls -d .wheels ../shared/wheels shared/wheels 2>/dev/null | head -1)
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$WHEELS"/*.whl
export PYTHONPATH=/tmp/site:$PWD
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
nvidia-smi --query-gpu=name --format=csv,noheader | tee "$OUT/gpu.txt"
python3 -c "import torch, triton, liger_kernel; print(torch.__version__, triton.__version__)" | tee -a "$OUT/gpu.txt"
mkdir -p /tmp/liger && cp examples/liger_distill.py /tmp/liger/  # its own folder: what candidates see beside them
if [ -z "${REDUCE_ONLY:-}" ]; then
( cd /tmp/liger && timeout 120 python3 liger_distill.py ) > "$OUT/plain.txt" 2>&1; echo "plain rc=$?" >> "$OUT/plain.txt"
( cd examples/hand_minimal && timeout 120 python3 liger_distill.py ) > "$OUT/hand.txt" 2>&1; echo "hand rc=$?" >> "$OUT/hand.txt"
timeout 200 python3 -m minimizer check /tmp/liger/liger_distill.py --json > "$OUT/check.json" 2> "$OUT/check.err"
fi
# PROFILE=1 samples the parent with py-spy (only threads holding the GIL: the parent's own work), if a py-spy
# wheel is in the wheels folder (`pip download py-spy -d .wheels` where there is a registry); its report's
# parent share then includes the sampler's overhead.
PROFILER=()
if [ -n "${PROFILE:-}" ] && [ -x /tmp/site/bin/py-spy ]; then
  PROFILER=(/tmp/site/bin/py-spy record --gil -r 100 -f raw -o "$OUT/parent-spy.txt" --)
fi
timeout $((MAX_TIME + 120)) "${PROFILER[@]}" python3 -m minimizer reduce /tmp/liger/liger_distill.py -j 8 \
  --max-time "$MAX_TIME" -o "$OUT/liger_distill.min.py" --report "$OUT/report.json" > "$OUT/reduce.txt" 2>&1
echo "reduce rc=$?" >> "$OUT/reduce.txt"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('tokens', d['before']['tokens'], '->', d['after']['tokens'], 'calls', d['oracle_calls'], 'seconds', d['seconds'], 'parent cpu', d['parent_cpu_seconds'], 'share', round(d['parent_cpu_seconds'] / d['seconds'], 2)); c = d.get('candidates', {}); print('candidates', {k: v for k, v in c.items() if k not in ('slowest', 'timeline')}); [print('slowest', s['seconds'], 's, timed out' if s['timed_out'] else 's', chr(10) + s['text']) for s in c.get('slowest', [])[:1]]" "$OUT/report.json"
for f in plain.txt hand.txt check.err reduce.txt; do [ -f "$OUT/$f" ] && { echo "== $f"; tail -n 5 "$OUT/$f"; }; done
