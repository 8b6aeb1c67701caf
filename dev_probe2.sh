#!/usr/bin/env bash
# usage: bash dev_probe2.sh EXAMPLE "JOBS:MAXTIME:TIMEOUT ..."  (reports straight into $OUT)
set -uo pipefail
EX=$1; shift
python3 -m pip install -q --no-index --no-deps --target /tmp/site .wheels/*.whl
export PYTHONPATH=/tmp/site:$PWD
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/pycache
python3 -c "import torch, torch._inductor.compile_fx, triton"
for spec in $1; do
  IFS=: read J MT TO <<< "$spec"
  D=/tmp/run-j$J; rm -rf $D; mkdir -p $D; cp "$EX" examples/_planted.py $D/
  timeout "$TO" python3 -m minimizer reduce $D/$(basename $EX) -j $J --max-time $MT -o $D/repro.py --report "$OUT/report-j$J.json" > "$OUT/log-j$J.txt" 2>&1
  echo "rc=$?" >> "$OUT/log-j$J.txt"
done
