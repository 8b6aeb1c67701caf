"""What ``--max-time`` covers: the whole command, not only the reduction.

After the reduction stops, the repro is stated (a run under the oracles) and confirmed (``--confirm`` runs under
the oracles and as many under plain python, ``--jobs`` at a time). Where plain python takes half a minute (a fresh
interpreter compiling for CUDA), that is a minute or more past the limit. The reduction therefore stops early
enough for them, by an estimate from the original's own runs in the check (a repro runs no longer than the script
it came from), never taking more than half of the limit from the reduction.
"""

from __future__ import annotations

import math

from minimizer.check import CheckReport


def seconds_for_the_end(report: CheckReport, jobs: int, confirm: int) -> float:
    """About how long stating and confirming a repro of ``report``'s script take."""

    oracle = max((run.seconds for run in report.runs), default=0.0)
    plain = max((run.seconds for run in report.plain), default=0.0)
    confirm = max(1, confirm)
    waves = math.ceil(2 * confirm / max(1, jobs))  # the confirmations: `jobs` at a time, the slowest sets the pace
    return oracle + waves * max(oracle, plain)


def reduction_deadline(started: float, max_time: float | None, end_seconds: float) -> float | None:
    """When the reduction stops (a ``time.monotonic()`` value), or None without a limit."""

    if not max_time:
        return None
    return started + max_time - min(end_seconds, max_time / 2)
