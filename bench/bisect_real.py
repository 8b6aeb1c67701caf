"""`minimizer bisect` on a real bug over several torch releases, and the issue body `minimizer report` writes.

The default repro is the corpus's hand-minimal repro of pytorch#138908 (fires on torch 2.5.1, fixed by 2.13):

    python bench/bisect_real.py --venv-dir /path/to/venvs --torch 2.5.1,2.6.0,2.8.0,2.13.0

Venvs are made in ``--venv-dir`` where missing (several GB per release). Writes the table, the verdict, the
seconds per release and the issue body to ``bench/results/<date>-bisect-<host>.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import socket
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.bisect import bisect  # noqa: E402
from minimizer.report import issue_body  # noqa: E402
from minimizer.runner.process import Limits  # noqa: E402

DEFAULT_REPRO = REPO / "corpus" / "cases" / "index_put_accumulate" / "hand.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repro", type=Path, default=DEFAULT_REPRO)
    parser.add_argument("--torch", default="2.5.1,2.6.0,2.8.0,2.13.0")
    parser.add_argument("--venv-dir", type=Path, required=True)
    parser.add_argument("--confirm", type=int, default=2)
    parser.add_argument("--json-out", default="")
    args = parser.parse_args()

    started = time.monotonic()
    stamps: dict[str, float] = {}

    def say(line: str) -> None:
        print(line, flush=True)
        stamps[line.split(":")[0]] = time.monotonic() - started

    outcome = bisect(
        args.repro.read_text(),
        args.repro.name,
        str(args.repro.parent),
        args.torch.split(","),
        venv_dir=args.venv_dir,
        confirm=args.confirm,
        limits=Limits(timeout=600),
        say=say,
    )
    print(outcome.markdown())
    # The error and the environment in the issue are those of a release where it fails.
    failing = next((r.python for r in outcome.results if r.status == "fails" and r.python), sys.executable)
    body = issue_body(args.repro, bisection=outcome, python=failing)
    out = Path(args.json_out) if args.json_out else (
        REPO / "bench" / "results" / f"{dt.date.today().isoformat()}-bisect-{socket.gethostname()}.json"
    )
    out.write_text(json.dumps({
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "repro": str(args.repro.relative_to(REPO)) if args.repro.is_relative_to(REPO) else str(args.repro),
        "seconds": round(time.monotonic() - started, 1),
        **outcome.to_json(),
        "issue_body": body,
    }, indent=2) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
