"""What speculation buys the scheduler, apart from the machine: the source reducer on an example, with a stand-in
oracle that answers after a fixed latency.

The stand-in says "still shows the bug" when the candidate passes the static screen and still holds every anchor
(a piece of text the bug needs, from the hand-minimal repro). The passes, the screen and the parent's work are
the real ones; only the candidate's run is replaced by a sleep, so the figures show how well the workers are
kept busy with questions the reduction really asks, not how fast a machine compiles. Every setting must reach
the same repro (checked).

    python bench/speculation.py [EXAMPLE] [--latency S] [--latency-no S] [--jobs 1,4,8] [--anchor TEXT ...]
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from minimizer.metrics import measure  # noqa: E402
from minimizer.progress import QuietProgress  # noqa: E402
from minimizer.reduce.scheduler import Reducer  # noqa: E402
from minimizer.reduce.tester import Tester  # noqa: E402
from minimizer.reduce.keys import candidate_key  # noqa: E402
from minimizer.source.format import parse_module, render_module, source_passes, source_size  # noqa: E402
from minimizer.source.passes import FOLLOW_UP  # noqa: E402
from minimizer.source.rendering import settled  # noqa: E402
from minimizer.source.viability import Viability  # noqa: E402

ANCHORS = {
    "skew_requires_grad.py": ["] = ", "torch.compile(", "planted_backend", "requires_grad=True", ".requires_grad"],
    "triton_inplace_grad.py": ["tl.store(x_ptr", "save_for_backward", "backward(", "triton.jit", "torch.tanh"],
}


def reduce_once(
    source: str, anchors: list[str], latency: float, jobs: int, speculate: bool, latency_no: float | None = None
) -> dict:
    viability = Viability.of(source, oracle_compares_compiled_calls=True)

    def evaluate(text: str, cancel: threading.Event) -> bool | None:
        shows = all(anchor in text for anchor in anchors)
        if cancel.wait(latency if shows or latency_no is None else latency_no):
            return None
        return shows

    tester = Tester(
        render_module, evaluate, key=candidate_key, screen=viability.why_not, jobs=jobs, speculate=speculate
    )
    started, cpu_started = time.monotonic(), time.process_time()
    try:
        reducer = Reducer(
            source_passes(), tester, source_size, QuietProgress(), follow_up=FOLLOW_UP, settle=settled
        )
        result = reducer.reduce(parse_module(source))
    finally:
        tester.close()
    text = render_module(result)
    return {
        "jobs": jobs,
        "speculate": speculate,
        "seconds": time.monotonic() - started,
        "parent_cpu_seconds": time.process_time() - cpu_started,
        "oracle_calls": tester.stats.oracle_calls,
        "cancelled": tester.stats.cancelled,
        "tokens": measure(text).tokens,
        "text": text,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("example", nargs="?", default=str(REPO / "examples" / "triton_inplace_grad.py"))
    parser.add_argument("--latency", type=float, default=0.5, help="seconds a stand-in oracle call takes")
    parser.add_argument(
        "--latency-no", type=float, default=None,
        help="seconds a call that does not show the bug takes (default: --latency; on the GPU host, 0.6 against 5.9)",
    )
    parser.add_argument("--jobs", default="1,4,8", help="comma-separated worker counts")
    parser.add_argument("--speculation-only", action="store_true", help="skip the runs with speculation off")
    parser.add_argument("--anchor", action="append", help="text the bug needs (default: per example)")
    args = parser.parse_args()
    example = Path(args.example)
    anchors = args.anchor or ANCHORS.get(example.name)
    if not anchors:
        parser.error(f"no default anchors for {example.name}: give --anchor")
    source = example.read_text()
    if not all(anchor in source for anchor in anchors):
        parser.error("the example does not hold every anchor")

    rows = []
    for jobs in [int(j) for j in args.jobs.split(",")]:
        for speculate in (True, False) if jobs > 1 and not args.speculation_only else (True,):
            rows.append(reduce_once(source, anchors, args.latency, jobs, speculate, args.latency_no))
            row = rows[-1]
            print(
                f"jobs {row['jobs']:2d}  speculation {'on ' if speculate else 'off'}  {row['seconds']:7.1f} s  "
                f"speed-up {rows[0]['seconds'] / row['seconds']:4.2f}  oracle calls {row['oracle_calls']:4d}  "
                f"cancelled {row['cancelled']:4d}  parent cpu {row['parent_cpu_seconds']:5.1f} s  tokens {row['tokens']}",
                flush=True,
            )
    if len({row["text"] for row in rows}) != 1:
        sys.exit("settings reached different repros: the scheduler's result must not depend on them")
    print(f"{example.name}: latency {args.latency} s per call; every setting reached the same {rows[0]['tokens']}-token repro")


if __name__ == "__main__":
    main()
