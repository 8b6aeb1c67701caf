"""bench/run.py's comparison at equal size (the benchmark itself runs for hours and is not part of the suite)."""

import importlib.util
import sys
from pathlib import Path

spec = importlib.util.spec_from_file_location("bench_run", Path(__file__).parent.parent / "bench" / "run.py")
bench = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = bench  # dataclasses look their module up
spec.loader.exec_module(bench)

TRAJECTORY = [
    {"oracle_calls": 0, "seconds": 0.0, "tokens": 500},
    {"oracle_calls": 10, "seconds": 20.0, "tokens": 200},
    {"oracle_calls": 40, "seconds": 90.0, "tokens": 60},
]


def minimizer_row(final_tokens: int) -> "bench.Row":
    return bench.Row("x.py", "minimizer", tokens=final_tokens, extra={"trajectory": TRAJECTORY})


def test_cost_to_reach_is_the_first_point_at_or_below_the_size():
    row = minimizer_row(60)
    assert bench.cost_to_reach(row, 200) == (10, 20.0)
    assert bench.cost_to_reach(row, 199) == (40, 90.0)
    assert bench.cost_to_reach(row, 59) is None


def test_cost_to_reach_counts_what_stating_the_bug_added():
    # The final repro is 70 tokens, 10 more than the last reduction step: every point is taken 10 larger.
    row = minimizer_row(70)
    assert bench.cost_to_reach(row, 200) == (40, 90.0)
    assert bench.cost_to_reach(row, 210) == (10, 20.0)


def test_cost_to_reach_takes_the_stated_tokens_from_the_report():
    # The graph stage made a standalone script larger than the last point (60); stating added only 5 tokens.
    row = bench.Row("x.py", "minimizer", tokens=80, extra={"trajectory": TRAJECTORY, "stated_tokens": 5})
    assert bench.cost_to_reach(row, 65) == (40, 90.0)
    assert bench.cost_to_reach(row, 64) is None
