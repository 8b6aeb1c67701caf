"""What the candidates' runs cost, for the report: where a reduction's time went when it stalls.

A reduction waits for the first candidate in order; one that runs into the time limit holds every step behind it
for the whole limit. The report says how many did and how long runs took, and keeps the slowest few (with their
text, and for a run killed at the limit, where its threads were) to show what made them slow.
"""

from __future__ import annotations

import heapq
import statistics
import threading
import time
from dataclasses import dataclass, field

KEPT_SLOWEST = 3
# The candidates' own runs set their time limit once this many have finished: the original's first (cold) run,
# which sets it before, can take several times a warm candidate's, and a candidate that runs into the limit
# holds every step behind it for the whole limit.
RUNS_BEFORE_ADAPTING = 10


@dataclass
class CandidateLog:
    seconds: list[float] = field(default_factory=list)  # runs that finished (or were killed at the limit)
    timed_out: int = 0
    timed_out_seconds: float = 0.0
    cancelled: int = 0
    # A min-heap of the slowest runs: (seconds, run number, timed out, text, stacks at the time limit).
    _slowest: list[tuple[float, int, bool, str, str]] = field(default_factory=list)
    # Every run, cancelled ones too, as [start, seconds, outcome, key] (start in seconds since ``origin``; outcome
    # "y" shows the bug, "n" does not, "c" cancelled, "t" timed out; key: a short hash of the candidate's cache key):
    # when workers were busy, and with what (bench/replay.py replays a run's answers).
    timeline: list[list] = field(default_factory=list)
    origin: float = field(default_factory=time.monotonic)
    # The parts of each finished run's time (see Runs.still_fails), by whether it showed the bug.
    _parts: dict[bool, list[dict[str, float]]] = field(default_factory=lambda: {True: [], False: []})
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(
        self,
        text: str,
        seconds: float,
        *,
        timed_out: bool,
        cancelled: bool,
        stacks: str = "",
        started: float | None = None,
        interesting: bool | None = None,
        key: str = "",
        parts: dict[str, float] | None = None,
    ) -> None:
        with self._lock:
            if parts is not None and interesting is not None and not (cancelled or timed_out):
                self._parts[interesting].append(parts)
            if started is not None:
                outcome = "c" if cancelled else "t" if timed_out else "y" if interesting else "n"
                self.timeline.append([round(started - self.origin, 2), round(seconds, 2), outcome, key])
            if cancelled:
                self.cancelled += 1
                return
            self.seconds.append(seconds)
            if timed_out:
                self.timed_out += 1
                self.timed_out_seconds += seconds
            entry = (seconds, len(self.seconds), timed_out, text, stacks)
            if len(self._slowest) < KEPT_SLOWEST:
                heapq.heappush(self._slowest, entry)
            elif seconds > self._slowest[0][0]:
                heapq.heapreplace(self._slowest, entry)

    def time_limit(self, initial: float, *, factor: float, floor: float) -> float:
        """The limit for the next candidate: ``initial`` until enough runs finished, then ``factor`` times the
        90th percentile of the finished runs plus 10 s (at least ``floor``), never above ``initial``."""

        with self._lock:
            finished = sorted(self.seconds)
            if len(finished) - self.timed_out < RUNS_BEFORE_ADAPTING:
                return initial
            p90 = finished[int(0.9 * (len(finished) - 1))]
        return min(initial, max(floor, factor * p90 + 10))

    def summary(self) -> dict:
        with self._lock:
            runs = sorted(self.seconds)
            slowest = sorted(self._slowest, reverse=True)
            return {
                "runs": len(runs),
                "cancelled": self.cancelled,
                "median_seconds": round(statistics.median(runs), 2) if runs else None,
                "p90_seconds": round(runs[int(0.9 * (len(runs) - 1))], 2) if runs else None,
                "timed_out": self.timed_out,
                "timed_out_seconds": round(self.timed_out_seconds, 1),
                "slowest": [
                    {"seconds": round(seconds, 2), "run": number, "timed_out": timed_out, "text": text}
                    | ({"stacks": stacks} if stacks else {})
                    for seconds, number, timed_out, text, stacks in slowest
                ],
                "median_parts": {
                    label: median_parts(self._parts[shown])
                    for label, shown in (("shows the bug", True), ("does not", False))
                    if self._parts[shown]
                },
                "timeline": sorted(self.timeline),
            }


def median_parts(runs: list[dict[str, float]]) -> dict[str, float]:
    """Each part's median over ``runs`` (a part a run lacks counts as 0 there), in the order parts first came."""

    names = list(dict.fromkeys(name for run in runs for name in run))
    return {name: round(statistics.median(run.get(name, 0.0) for run in runs), 3) for name in names}
