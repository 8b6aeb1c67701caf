"""The repros of a corpus run written as regression tests (`minimizer test`), each checked as `minimizer test`
checks it: it fails under plain python as the repro does and under pytest, and passes with torch.compile as the
identity. Prints one row per case and a summary; `--json-out` keeps them.

    python bench/regression_tests.py bench/results/RUN.json [RUN2.json ...] [--style pytorch|pytest] [--cases A,B]

Each repro runs in a copy of its case's folder (the files beside the program: `_planted.py`, data), as
`bench/corpus.py` ran it. A case whose run left no output, or whose case folder is gone, is skipped and named.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.regression_check import check_regression_test  # noqa: E402
from minimizer.regression_test import regression_test  # noqa: E402
from minimizer.runner.run_types import Limits  # noqa: E402


def latest_outputs(runs: list[Path], cases: set[str] | None) -> dict[str, str]:
    """Each case's reduced program from the given corpus runs (a later file wins)."""

    outputs: dict[str, str] = {}
    for run in runs:
        for result in json.loads(run.read_text()).get("results", []):
            if result.get("output") and (cases is None or result["case"] in cases):
                outputs[result["case"]] = result["output"]
    return outputs


def check_case(case: str, repro: str, style: str, timeout: float) -> dict:
    folder = REPO / "corpus" / "cases" / case
    if not folder.is_dir():
        return {"case": case, "skipped": "no such case folder"}
    with tempfile.TemporaryDirectory(prefix="regression-") as scratch:
        beside = Path(scratch) / case
        shutil.copytree(folder, beside, ignore=shutil.ignore_patterns("program.py", "hand.py", "case.json"))
        started = time.monotonic()
        test = regression_test(repro, style=style, name=case)
        checked = check_regression_test(test, f"test_{case}.py", repro, beside, Limits(timeout=timeout))
    return {
        "case": case,
        "ok": not checked.problems,
        "told": checked.describe(),
        "seconds": round(time.monotonic() - started, 1),
        "identity_asked": checked.identity is not None,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="+", type=Path, help="corpus runs (bench/corpus.py --json-out files)")
    parser.add_argument("--style", default="pytorch", choices=("pytorch", "pytest"))
    parser.add_argument("--cases", help="comma-separated case names (default: every case with an output)")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per run of a test")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    cases = set(args.cases.split(",")) if args.cases else None
    rows = []
    for case, repro in sorted(latest_outputs(args.runs, cases).items()):
        row = check_case(case, repro, args.style, args.timeout)
        rows.append(row)
        print(f"{case:45s} {'ok ' if row.get('ok') else 'NO '} {row.get('seconds', 0):6.1f} s  {row.get('told') or row.get('skipped')}", flush=True)
    done = [row for row in rows if "ok" in row]
    print(f"{sum(row['ok'] for row in done)} of {len(done)} tests fail today and pass once fixed ({args.style} style)")
    if args.json_out:
        args.json_out.write_text(json.dumps({"style": args.style, "runs": [str(r) for r in args.runs], "rows": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
