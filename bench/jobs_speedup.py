"""`--jobs N` against `--jobs 1` on one example: wall time to each size both runs reached, and the speed-up.

The steps a reduction takes do not depend on ``--jobs``, so both runs pass through the same sizes; the report's
``trajectory`` says when each run first reached each size. With ``--max-time`` a run may stop early: the
comparison then stands at the smallest size both reached.

    python bench/jobs_speedup.py EXAMPLE [--jobs 8] [--max-time S] [--json-out FILE] [-- extra reduce options]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from minimizer.output import strip_header  # noqa: E402


def reduce(example: Path, jobs: int, max_time: float | None, extra: list[str], scratch: Path) -> dict:
    report = scratch / f"report-j{jobs}.json"
    output = scratch / f"repro-j{jobs}.py"
    command = [sys.executable, "-m", "minimizer", "reduce", str(example), "-o", str(output), "--report", str(report)]
    command += ["--jobs", str(jobs), "-q", *extra]
    if max_time is not None:
        command += ["--max-time", str(max_time)]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if run.returncode != 0:
        sys.exit(f"minimizer reduce --jobs {jobs} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    data = json.loads(report.read_text())
    return {"jobs": jobs, "wall_seconds": wall, "report": data, "repro": output.read_text()}


def seconds_to(trajectory: list[dict], tokens: int) -> float | None:
    """When the run first had a repro of at most ``tokens`` tokens (the report's seconds), or None."""

    return next((point["seconds"] for point in trajectory if point["tokens"] <= tokens), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", type=Path)
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--max-time", type=float, default=None, help="passed to both runs")
    parser.add_argument("--json-out", type=Path, default=None)
    parser.add_argument("extra", nargs="*", help="more `minimizer reduce` options (after --)")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        runs = [reduce(args.example, jobs, args.max_time, args.extra, Path(scratch)) for jobs in (args.jobs, 1)]
    parallel, serial = runs
    for run in runs:
        report = run["report"]
        print(
            f"--jobs {run['jobs']}: {run['wall_seconds']:.1f} s wall, {report['seconds']:.1f} s reducing, "
            f"{report['oracle_calls']} oracle calls, {report['before']['tokens']} -> {report['after']['tokens']} "
            f"tokens{' (stopped early)' if report['stopped_early'] else ''}, "
            f"parent CPU {report.get('parent_cpu_seconds', float('nan')):.1f} s"
        )
    common = max(min(p["tokens"] for p in run["report"]["trajectory"]) for run in runs)
    at_serial = seconds_to(serial["report"]["trajectory"], common)
    at_parallel = seconds_to(parallel["report"]["trajectory"], common)
    same = strip_header(parallel["repro"]) == strip_header(serial["repro"])  # the header has the run's figures
    print(
        f"first at {common} tokens: --jobs 1 after {at_serial:.1f} s, --jobs {args.jobs} after {at_parallel:.1f} s: "
        f"speed-up {at_serial / at_parallel:.2f}"
    )
    if not any(run["report"]["stopped_early"] for run in runs):
        print(
            f"whole runs: speed-up {serial['wall_seconds'] / parallel['wall_seconds']:.2f}; "
            f"same repro: {'yes' if same else 'NO'}"
        )
    if args.json_out:
        summary = {"example": str(args.example), "common_tokens": common, "seconds_to_common": {
            "1": at_serial, str(args.jobs): at_parallel}, "same_repro": same, "runs": runs}
        args.json_out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
