#!/usr/bin/env bash
set -uo pipefail
python3 -m pip install -q --no-index --no-deps --target /tmp/site .wheels/*.whl
export PYTHONPATH=/tmp/site:$PWD
unset PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX=/tmp/pycache
python3 -c "import torch, torch._inductor.compile_fx, triton"
for MC in 0.1 0.25; do
  D=/tmp/run-$MC; rm -rf $D; mkdir -p $D; cp examples/planted_miscompile.py examples/_planted.py $D/
  timeout 200 python3 -c "
import sys, minimizer.reduce.tester as t
t.MIN_CHANCE_WITH_CUDA = $MC
from minimizer.cli import app
sys.argv = ['minimizer', 'reduce', '$D/planted_miscompile.py', '-j', '8', '--max-time', '95', '-o', '$D/repro.py', '--report', '$OUT/report-mc$MC.json']
app(prog_name='minimizer')
" > "$OUT/log-mc$MC.txt" 2>&1
  echo "rc=$?" >> "$OUT/log-mc$MC.txt"
done
