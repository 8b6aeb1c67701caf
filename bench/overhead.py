"""What an oracle call costs beyond the script's own work: warm fork server against a fresh interpreter.

    python bench/overhead.py [--warm N] [--cold N] [--device cuda]

Each candidate is a script that does almost nothing with torch (``torch.ones(4).sum()``), run the way a
reduction runs candidates (own process, own temporary directory, limits, the ``script`` oracle evaluated, the
verdict read back). What a candidate costs here is therefore the runner's overhead per candidate. Prints the
mean, median and worst seconds per candidate for each launcher. With ``--device cuda`` the tensor lives on the
GPU, so each candidate also pays for creating its CUDA context (the warm server never creates one: a context
does not survive fork).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from minimizer.runner.process import run_candidate  # noqa: E402

from minimizer.runner.run_types import RunSettings
from minimizer.runner.warm import ForkServerLauncher  # noqa: E402



def trivial_script(device: str) -> str:
    return f"import torch\nprint(float(torch.ones(4, device={device!r}).sum()))\n"


def time_candidates(count: int, settings: RunSettings, launcher=None, device: str = "cpu") -> list[float]:
    seconds = []
    for _ in range(count):
        started = time.perf_counter()
        result = run_candidate(trivial_script(device), settings, launcher=launcher)
        seconds.append(time.perf_counter() - started)
        if not result.completed:
            raise SystemExit(f"a trivial candidate did not complete: {result.describe_end()}")
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--warm", type=int, default=30, help="candidates forked from the warm server")
    parser.add_argument("--cold", type=int, default=5, help="candidates in a fresh interpreter each")
    parser.add_argument("--device", default="cpu", help="where the candidate's tensor lives (cpu, cuda)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as origin:
        settings = RunSettings("candidate.py", origin, ("script",))
        launcher = ForkServerLauncher()
        try:
            started = time.perf_counter()
            time_candidates(1, settings, launcher, args.device)  # starts the server: imports torch once
            print(f"warm server start (imports torch once): {time.perf_counter() - started:.2f} s")
            rows = [("warm (fork)", time_candidates(args.warm, settings, launcher, args.device))]
        finally:
            launcher.close()
        rows.append(("cold (fresh interpreter)", time_candidates(args.cold, settings, device=args.device)))
    print(f"device {args.device}")
    print(f"{'launcher':<26}{'candidates':>11}{'mean s':>9}{'median s':>10}{'worst s':>9}")
    for name, seconds in rows:
        print(
            f"{name:<26}{len(seconds):>11}{statistics.mean(seconds):>9.3f}"
            f"{statistics.median(seconds):>10.3f}{max(seconds):>9.3f}"
        )


if __name__ == "__main__":
    main()
