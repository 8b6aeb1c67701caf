python3 -m pip install -q --no-index --no-deps --target /tmp/site .wheels/*.whl; export PYTHONPATH=/tmp/site:$PWD
nvidia-smi --query-gpu=name --format=csv,noheader
mkdir -p /tmp/pm && cp examples/planted_miscompile.py examples/_planted.py /tmp/pm/
run() {  # MIN_CHANCE PREEMPT_FACTOR NAME
  timeout 280 python3 -c "import sys; import minimizer.reduce.tester as t; t.MIN_CHANCE=float(sys.argv.pop(1)); t.PREEMPT_FACTOR=float(sys.argv.pop(1)); from minimizer.cli import app; app(prog_name='minimizer')" $1 $2 \
    reduce /tmp/pm/planted_miscompile.py -j 8 -o /tmp/pm/out-$3.py --report $OUT/$3.json > $OUT/$3.log 2>&1
  python3 bench/critical_path.py $OUT/$3.json
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); c=r['candidates']; print('$3', r['seconds'], r['after']['tokens'], 'runs', c['runs'], 'cancelled', c['cancelled'], c['median_parts'])" $OUT/$3.json
}
run 0.25 10 tuned
run 0.1 3 default
