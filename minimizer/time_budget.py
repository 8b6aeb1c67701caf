"""What ``--max-time`` covers: the whole command, not only the reduction.

After the reduction stops, the repro is stated (a run under the oracles) and confirmed (``--confirm`` runs under
the oracles and as many under plain python, ``--jobs`` at a time). Where plain python takes half a minute (a fresh
interpreter compiling for CUDA), that is a minute or more past the limit. The reduction therefore stops early
enough for them, by an estimate from the original's own runs in the check (a repro runs no longer than the script
it came from), never taking more than half of the limit from the reduction.
"""

from __future__ import annotations

import math

from minimizer.stages.check import CheckReport


def seconds_for_the_end(report: CheckReport, jobs: int, confirm: int) -> float:
    """About how long stating and confirming a repro of ``report``'s script take: a run each, the confirmations
    ``jobs`` at a time, each as long as the original's slowest plain run. A cold interpreter running the whole
    script bounds what a repro costs under plain python, and the oracles' runs of it, which start from a warm
    server, cost less (the check's own oracle runs are cold, and up to twice as slow as they will be)."""

    plain = max((run.seconds for run in report.plain), default=0.0) or max(
        (run.seconds for run in report.runs), default=0.0
    )
    waves = math.ceil(2 * max(1, confirm) / max(1, jobs))
    return (1 + waves) * plain


def reduction_deadline(started: float, max_time: float | None, end_seconds: float) -> float | None:
    """When the reduction stops (a ``time.monotonic()`` value), or None without a limit."""

    if not max_time:
        return None
    return started + max_time - min(end_seconds, max_time / 2)
