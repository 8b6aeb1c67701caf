"""Replay a real reduction's answers through the scheduler, offline: what would `-j N` have taken, given how the
candidates really answered and how long their runs took.

A report's `candidates.timeline` names each run's candidate (a short hash of its cache key) with its outcome and
seconds. This bench runs the real source reducer (passes, screen, follow-ups, speculation) on the original
script, with an oracle that answers each candidate as the recorded run did, after the recorded time divided by
``--speed``. A candidate no recorded run answered (a speculation the real run cancelled or never started) answers
as its cut (`change_key` against the base it was cut from) answered in this replay's `-j 1` run, after that run's
time; a cut the `-j 1` run never asked counts as not showing the bug, after the median time of such runs. The
caller's own questions are the same at any `-j`, and the `-j 1` run answered every one of them up to its last
step, so only the timing of speculation is guessed (``--jobs`` must list 1 first for the cuts). Sizes below the `-j 1` run's smallest are not comparable (its answers stop there).

    python bench/replay.py bench/results/2026-11-26-h100-miscompile-j8-vs-j1.json [--jobs 1,8] [--speed 10]

Caveats: the parent's own work runs at its real pace, so its share grows ``--speed`` times when figures are
scaled back (use a low ``--speed`` for end figures); unknown cuts answer quickly, so a replay speculates
more than the real run did, and it knows nothing of what runs cost each other (CUDA contexts created one after
another on the GPU host). First use (2026-11-26, the H100 pair, ``--speed 5``): -j 1 305 s, -j 8 106 s (the
real reductions: 242 s and 98 s), 2.89x against the real 2.41x.

Use it to tune the scheduler (``MIN_CHANCE``, ``PREEMPT_FACTOR``) against real answer patterns before spending
GPU time; a setting only counts once a real run confirms it.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.metrics import measure  # noqa: E402
from minimizer.reduce.change import change_key  # noqa: E402
from minimizer.reduce.scheduler import Reducer  # noqa: E402
from minimizer.reduce.tester import Tester  # noqa: E402
from minimizer.reduce.keys import candidate_key, short_key  # noqa: E402
from minimizer.source.format import parse_module, render_module, source_passes, source_size  # noqa: E402
from minimizer.source.passes import FOLLOW_UP  # noqa: E402
from minimizer.source.rendering import settled  # noqa: E402
from minimizer.source.screen import SourceScreen  # noqa: E402
from minimizer.source.statement import StatementPlace  # noqa: E402
from minimizer.source.viability import Viability  # noqa: E402
from oracles.bug import Bug  # noqa: E402
from oracles.api import NEEDS_CALLS  # noqa: E402
from oracles.registry import load_oracle  # noqa: E402


def recorded_answers(runs: list[dict]) -> tuple[dict[str, tuple[bool, float]], float]:
    """Per candidate key: (shows the bug, seconds) from every run's timeline (a run killed at the limit does not
    show it); and the median seconds of runs that did not show it."""

    answers: dict[str, tuple[bool, float]] = {}
    quick: list[float] = []
    for run in runs:
        for _start, seconds, outcome, key in run["report"]["candidates"]["timeline"]:
            if outcome in ("y", "n", "t"):
                answers.setdefault(key, (outcome == "y", seconds))
            if outcome == "n":
                quick.append(seconds)
    return answers, statistics.median(quick) if quick else 1.0


class _Trajectory:
    """The reducer's observer: when each size was first reached."""

    def __init__(self, source: str) -> None:
        self.started = time.monotonic()
        self.points: list[tuple[float, int]] = []
        self.best = source  # the screen compares a candidate with the best so far, as the session's does

    def reduction_started(self, size: int) -> None:
        self.started = time.monotonic()

    def pass_started(self, name: str) -> None:
        pass

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.points.append((time.monotonic() - self.started, measure(text).tokens))
        self.best = text


def replay(
    source: str, spec: str, bug: Bug, answers: dict, quick: float, jobs: int, speed: float, cuts: dict
) -> dict:
    """Replay with ``jobs`` workers. ``cuts``: the answer and seconds per cut (`change_key` of a question against
    the best repro it was cut from), filled by the caller's questions of this replay and answering those of later
    replays that no recorded run answered (a speculation the real run never ran: the same cut asked on another base
    mostly answers the same)."""

    screen = SourceScreen(
        Viability.of(source, oracle_compares_compiled_calls=NEEDS_CALLS in load_oracle(spec).needs),
        StatementPlace(spec, bug),
    )
    unknown = guessed = 0

    def evaluate(text: str, cancel: threading.Event) -> bool | None:
        nonlocal unknown, guessed
        shows, seconds = answers.get(short_key(text), (None, quick))
        cut = change_key(trajectory.best, text) if jobs == 1 else tester._change_of_key.get(candidate_key(text))
        if shows is not None and jobs == 1 and cut is not None:
            cuts.setdefault(cut, (shows, seconds))
        elif shows is None and cut in cuts:
            (shows, seconds), guessed = cuts[cut], guessed + 1
        elif shows is None:
            unknown += 1
        if cancel.wait(seconds / speed):
            return None
        return bool(shows)

    trajectory = _Trajectory(source)
    tester = Tester(
        render_module, evaluate, key=candidate_key, screen=lambda text: screen(text, trajectory.best), jobs=jobs
    )
    try:
        Reducer(source_passes(), tester, source_size, trajectory, follow_up=FOLLOW_UP, settle=settled).reduce(
            parse_module(source)
        )
    finally:
        tester.close()
    # Back in the real run's seconds.
    points = [(round(seconds * speed, 1), tokens) for seconds, tokens in trajectory.points]
    return {
        "jobs": jobs, "points": points, "oracle_calls": tester.stats.oracle_calls, "unknown": unknown,
        "guessed": guessed,
    }


def seconds_to(points: list[tuple[float, int]], tokens: int) -> float | None:
    return next((seconds for seconds, size in points if size <= tokens), None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("result", type=Path, help="a bench/jobs_speedup.py --json-out file (both runs)")
    parser.add_argument("--jobs", default="1,8")
    parser.add_argument("--speed", type=float, default=10.0, help="replay this many times faster than real")
    parser.add_argument(
        "--unknown-seconds", type=float, help="how long a candidate no run answered takes (default: a quick no)"
    )
    parser.add_argument("--min-chance", type=float, help="the scheduler's MIN_CHANCE for this replay")
    parser.add_argument("--preempt-factor", type=float, help="the scheduler's PREEMPT_FACTOR for this replay")
    args = parser.parse_args()
    import minimizer.reduce.tester as tester_module

    if args.min_chance is not None:
        tester_module.MIN_CHANCE = args.min_chance
    if args.preempt_factor is not None:
        tester_module.PREEMPT_FACTOR = args.preempt_factor

    saved = json.loads(args.result.read_text())
    runs = saved["runs"]
    source = (REPO / saved["example"]).read_text()
    report = runs[0]["report"]
    answers, quick = recorded_answers(runs)
    if args.unknown_seconds is not None:
        quick = args.unknown_seconds
    serial = next(run for run in runs if run["jobs"] == 1)
    floor = min(point["tokens"] for point in serial["report"]["trajectory"])
    print(f"{len(answers)} recorded answers; unknown candidates take {quick:.2f} s; comparable down to {floor} tokens")
    rows: list[dict] = []
    cuts: dict[str, tuple[bool, float]] = {}
    for jobs in [int(j) for j in args.jobs.split(",")]:
        bug = Bug.from_json(report["bug"]) if report.get("bug") else Bug(report["signature"])  # reports before the bug's fields
        row = replay(source, report["oracle"], bug, answers, quick, jobs, args.speed, cuts)
        rows.append(row)
        reached = seconds_to(row["points"], floor)
        print(
            f"-j {jobs}: {reached if reached is not None else '-'} s (reduction only) to {floor} tokens, "
            f"{row['oracle_calls']} calls, {row['unknown']} unknown, {row['guessed']} answered as their cut was"
        )
    first = seconds_to(rows[0]["points"], floor)
    for row in rows[1:]:
        reached = seconds_to(row["points"], floor)
        if first and reached:
            print(f"speed-up -j {row['jobs']} over -j {rows[0]['jobs']} to {floor} tokens: {first / reached:.2f}")


if __name__ == "__main__":
    main()
