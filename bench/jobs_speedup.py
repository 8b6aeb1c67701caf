"""`--jobs N` against `--jobs 1` on one example: wall time to each size both runs reached, and the speed-up.

The steps a reduction takes do not depend on ``--jobs``, so both runs pass through the same sizes; the report's
``trajectory`` says when each run first reached each size. With ``--max-time`` a run may stop early: the
comparison then stands at the smallest size both reached.

    python bench/jobs_speedup.py EXAMPLE [--jobs 8] [--max-time S] [--json-out FILE] [-- extra reduce options]
    python bench/jobs_speedup.py EXAMPLE --only 1 --save-dir DIR      # one setting (a device call each)
    python bench/jobs_speedup.py --compare DIR/run-j8.json DIR/run-j1.json [--json-out FILE]

Each run is saved as soon as it ends (``--save-dir``, ``run-j<N>.json``, with its progress output in
``run-j<N>.log``), so a call stopped at its time limit keeps the runs it finished.
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


def reduce(
    example: Path, jobs: int, max_time: float | None, extra: list[str], scratch: Path, log: Path | None = None
) -> dict:
    """One `minimizer reduce` run; with ``log``, its progress output is kept there."""

    report = scratch / f"report-j{jobs}.json"
    output = scratch / f"repro-j{jobs}.py"
    command = [sys.executable, "-m", "minimizer", "reduce", str(example), "-o", str(output), "--report", str(report)]
    command += ["--jobs", str(jobs), *([] if log else ["-q"]), *extra]
    if max_time is not None:
        command += ["--max-time", str(max_time)]
    started = time.monotonic()
    run = subprocess.run(command, capture_output=True, text=True)
    wall = time.monotonic() - started
    if log is not None:
        log.parent.mkdir(parents=True, exist_ok=True)
        log.write_text(run.stderr + run.stdout)
    if run.returncode != 0:
        sys.exit(f"minimizer reduce --jobs {jobs} failed ({run.returncode}): {run.stderr.strip()[-2000:]}")
    data = json.loads(report.read_text())
    return {"jobs": jobs, "wall_seconds": wall, "report": data, "repro": output.read_text()}


def seconds_to(trajectory: list[dict], tokens: int) -> float | None:
    """When the run first had a repro of at most ``tokens`` tokens (the report's seconds), or None."""

    return next((point["seconds"] for point in trajectory if point["tokens"] <= tokens), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", type=Path, nargs="?")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--max-time", type=float, default=None, help="passed to both runs")
    parser.add_argument("--only", type=int, default=None, help="run only this --jobs setting")
    parser.add_argument("--save-dir", type=Path, default=None, help="write each run there as it ends")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("PARALLEL", "SERIAL"), help="saved runs")
    parser.add_argument("--json-out", type=Path, default=None)
    argv = sys.argv[1:]
    # Options after `--` go to `minimizer reduce` (argparse would take them for a second positional).
    extra = argv[argv.index("--") + 1 :] if "--" in argv else []
    args = parser.parse_args(argv[: argv.index("--")] if "--" in argv else argv)
    args.extra = extra

    if args.compare:
        saved = [json.loads(path.read_text()) for path in args.compare]
        for run in saved:
            print_run(run)
        compare(saved, args.json_out)
        return
    if args.example is None:
        parser.error("give an EXAMPLE, or --compare two saved runs")
    settings = [args.only] if args.only else [args.jobs, 1]
    runs = []
    with tempfile.TemporaryDirectory() as scratch:
        for jobs in settings:
            log = args.save_dir / f"run-j{jobs}.log" if args.save_dir else None
            run = reduce(args.example, jobs, args.max_time, args.extra, Path(scratch), log)
            run["example"] = str(args.example)
            runs.append(run)
            print_run(run)
            if args.save_dir:
                args.save_dir.mkdir(parents=True, exist_ok=True)
                (args.save_dir / f"run-j{jobs}.json").write_text(json.dumps(run, indent=2) + "\n")
    if len(runs) == 2:
        compare(runs, args.json_out)


def print_run(run: dict) -> None:
    report = run["report"]
    print(
        f"--jobs {run['jobs']}: {run['wall_seconds']:.1f} s wall, {report['seconds']:.1f} s reducing, "
        f"{report['oracle_calls']} oracle calls, {report['before']['tokens']} -> {report['after']['tokens']} "
        f"tokens{' (stopped early)' if report['stopped_early'] else ''}, "
        f"parent CPU {report.get('parent_cpu_seconds', float('nan')):.1f} s"
    )


def compare(runs: list[dict], json_out: Path | None) -> None:
    """The first run against the second (parallel, serial): when each first reached the smallest size both did."""

    parallel, serial = runs
    common = max(min(p["tokens"] for p in run["report"]["trajectory"]) for run in runs)
    at_serial = seconds_to(serial["report"]["trajectory"], common)
    at_parallel = seconds_to(parallel["report"]["trajectory"], common)
    same = strip_header(parallel["repro"]) == strip_header(serial["repro"])  # the header has the run's figures
    print(
        f"first at {common} tokens: --jobs {serial['jobs']} after {at_serial:.1f} s, --jobs {parallel['jobs']} after "
        f"{at_parallel:.1f} s: speed-up {at_serial / at_parallel:.2f}"
    )
    if not any(run["report"]["stopped_early"] for run in runs):
        print(
            f"whole runs: speed-up {serial['wall_seconds'] / parallel['wall_seconds']:.2f}; "
            f"same repro: {'yes' if same else 'NO'}"
        )
    if json_out:
        summary = {"example": parallel.get("example"), "common_tokens": common, "seconds_to_common": {
            str(serial["jobs"]): at_serial, str(parallel["jobs"]): at_parallel}, "same_repro": same, "runs": runs}
        json_out.write_text(json.dumps(summary, indent=2) + "\n")


if __name__ == "__main__":
    main()
