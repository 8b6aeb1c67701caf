"""Where a reduction's time to a size went, read off a saved report's candidate timeline.

For each accepted step that a candidate run made (not the free ones: a cache hit, a follow-up cut) it tells whether
that run started before the step before it was taken (speculation: the step then waited only for the rest of its
run), as it was taken, or later (runs that were turned down came between); and how long the parent took to take
steps after their run ended. A step whose time no run's end accounts for is counted apart. With one worker no run starts ahead;
with eight, what is left is the chain of accepted steps itself.

    python bench/critical_path.py REPORT_OR_RUN.json [--tokens 66]

Takes a `minimizer reduce --report` file, a `bench/jobs_speedup.py` run (`run-j8.json`) or comparison.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


# How long before a step may the run that made it have ended, and after (rounding in the report).
_MATCH_BEFORE = 1.0
_MATCH_AFTER = 0.05


def critical_path(report: dict, tokens: int) -> dict:
    timeline = report["candidates"]["timeline"]  # [start, seconds, outcome, key]
    trajectory = report["trajectory"]
    reached = next(p["seconds"] for p in trajectory if p["tokens"] <= tokens)
    accepted_runs = [run for run in timeline if run[2] == "y"]
    previous = timeline[0][0]
    parts = {
        "free steps": 0,  # taken as the step before was: a cache hit, a cut that followed from it
        # No run ended as they were taken, yet time passed: steps that kept the size came between (the trajectory
        # has only the steps that made the repro smaller), or their answer came from a run ended earlier.
        "steps matched to no run": 0,
        "their time": 0.0,
        "taken after their run ended": 0.0,  # summed over the steps matched to a run: the parent's lag
        "steps run ahead": 0,  # their run started before the step before was taken (speculation)
        "their waits": 0.0,  # from the step before to them
        "steps run then": 0,  # their run started as the step before was taken
        "their runs": 0.0,
        "steps run later": 0,  # other runs (turned down) came between
        "their delays": 0.0,  # from the step before to their run's start
        "and runs": 0.0,
    }
    for point in trajectory[1:]:
        if point["seconds"] > reached:
            break
        # The run that made the step ended a little before it was taken (the parent settles the new best first).
        ended = [run for run in accepted_runs if -_MATCH_AFTER <= point["seconds"] - (run[0] + run[1]) <= _MATCH_BEFORE]
        made_by = sorted(ended, key=lambda run: run[0] + run[1])[-1:]
        if made_by:
            parts["taken after their run ended"] += point["seconds"] - sum(made_by[0][:2])
        if point["seconds"] - previous < 0.05:
            parts["free steps"] += 1
        elif not made_by:
            parts["steps matched to no run"] += 1
            parts["their time"] += point["seconds"] - previous
        elif made_by[0][0] < previous - 0.05:
            parts["steps run ahead"] += 1
            parts["their waits"] += point["seconds"] - previous
        elif made_by[0][0] <= previous + 0.05:
            parts["steps run then"] += 1
            parts["their runs"] += point["seconds"] - previous
        else:
            parts["steps run later"] += 1
            parts["their delays"] += made_by[0][0] - previous
            parts["and runs"] += point["seconds"] - made_by[0][0]
        previous = max(previous, point["seconds"])
    before = [run for run in timeline if run[0] < reached]
    medians = {
        outcome: round(statistics.median(run[1] for run in before if run[2] == outcome), 2)
        for outcome in ("y", "n")
        if any(run[2] == outcome for run in before)
    }
    return {
        "tokens": tokens,
        "reached_at": reached,
        "first_candidate_at": timeline[0][0],
        "reduction_seconds": round(reached - timeline[0][0], 1),
        **{name: round(value, 1) if isinstance(value, float) else value for name, value in parts.items()},
        "median_run_seconds": {"shows the bug": medians.get("y"), "does not": medians.get("n")},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("report", type=Path)
    parser.add_argument("--tokens", type=int, default=66)
    args = parser.parse_args()
    data = json.loads(args.report.read_text())
    runs = data["runs"] if "runs" in data else [data if "jobs" in data and "report" in data else {"report": data}]
    for run in runs:
        report = run["report"]
        print(f"--jobs {report.get('jobs', '?')}:", json.dumps(critical_path(report, args.tokens)))


if __name__ == "__main__":
    main()
