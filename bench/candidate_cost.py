"""What one candidate costs through the warm server: the same script run alone a few times, then eight at once.

Shows the per-candidate floor (fork, the script, the oracle) and what eight parallel candidates cost each other on
this machine. The compile cache is shared and warm after the first run, as in a reduction.

    python bench/candidate_cost.py [SCRIPT] [--oracle numerical] [--parallel 2,4,8] [--no-start-ahead]

For each batch it prints the median parts of a candidate's run (launch, the child's start, the compiled calls,
their eager sides, the rest) and how many of the machine's cores were busy meanwhile (from /proc/stat): candidates
slowed by each other while the cores are saturated compete for the CPU; with cores idle, for something else.

First use (2026-11-26, H100 host, `examples/planted_miscompile.py`, numerical): 5.2-6.4 s alone and 6.1-8.5 s
eight at once before the server imported Inductor's compiler; 2.5-2.6 s and 3.1-4.3 s after.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.candidate_log import median_parts  # noqa: E402
from minimizer.runner import process  # noqa: E402
from minimizer.runner.process import run_candidate  # noqa: E402
from minimizer.runner.run_types import Limits, RunSettings
from minimizer.runner.warm import ForkServerLauncher  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("script", type=Path, nargs="?", default=REPO / "examples" / "planted_miscompile.py")
    parser.add_argument("--oracle", default="numerical")
    parser.add_argument("--parallel", default="8", help="comma-separated numbers of candidates run at once")
    parser.add_argument(
        "--no-start-ahead", action="store_true", help="fork each candidate when its job comes (CUDA started then)"
    )
    args = parser.parse_args()
    if args.no_start_ahead:
        process.may_start_cuda_ahead = lambda _source, _beside: False
    script = args.script.resolve()
    source = script.read_text()
    settings = RunSettings(
        filename=script.name,
        origin_dir=str(script.parent),
        oracles=(args.oracle,),
        limits=Limits(timeout=300),
        compile_cache=tempfile.mkdtemp(prefix="minimizer-bench-cache-"),
        settle_from=source,
    )
    launcher = ForkServerLauncher()
    ahead = {"forked": 0, "cuda started": 0, "runs": 0}
    phases: list[dict[str, float]] = []

    def one(_: int = 0) -> float:
        started = time.monotonic()
        result = run_candidate(source, settings, launcher=launcher)
        phases.append({"launch": time.monotonic() - started - sum(result.phase_seconds.values()), **result.phase_seconds})
        if not result.verdict(args.oracle).fires:
            sys.exit(f"the {args.oracle} oracle does not fire on {script.name}")
        ahead["runs"] += 1
        ahead["forked"] += result.forked_ahead
        ahead["cuda started"] += result.cuda_started_ahead
        return time.monotonic() - started

    try:
        print(f"first run (server start, cold compile cache): {one():.2f} s")
        phases.clear()
        print("alone:", " ".join(f"{one():.2f}" for _ in range(3)), "s")
        _print_phases(phases)
        for parallel in [int(n) for n in args.parallel.split(",")]:
            with ThreadPoolExecutor(parallel) as pool:
                for _ in range(2):
                    phases.clear()
                    started, busy_before = time.monotonic(), _cpu_seconds()
                    each = sorted(pool.map(one, range(parallel)))
                    wall = time.monotonic() - started
                    busy = (_cpu_seconds()[0] - busy_before[0]) / wall
                    print(
                        f"{parallel} at once: {wall:.2f} s in all, {busy:.1f} of {os.cpu_count()} cores busy; each",
                        " ".join(f"{s:.2f}" for s in each), "s",
                    )
                    _print_phases(phases)
        print(f"runs forked ahead of their job: {ahead['forked']} of {ahead['runs']}, CUDA started: {ahead['cuda started']}")
    finally:
        launcher.close()


def _print_phases(phases: list[dict[str, float]]) -> None:
    """The median seconds of each part of a candidate's run (``launch``: the parent's wait beyond the child's own
    clock: the fork, or the hand-over to a process forked ahead)."""

    medians = median_parts(phases)
    print("  median parts:", ", ".join(f"{name} {seconds:.2f}" for name, seconds in medians.items()))


def _cpu_seconds() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot, summed over its cores."""

    fields = [int(f) for f in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    ticks = os.sysconf("SC_CLK_TCK")
    return (sum(fields[:8]) - idle) / ticks, idle / ticks


if __name__ == "__main__":
    main()
