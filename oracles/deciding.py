"""Whether the comparison that failed decides the script's failure.

The run tells which comparison of the suspect's values came out false (``oracles.evidence``), not that the
check failed *because* of it: a helper that catches ``assert_close``'s failure and returns nothing, a list of
failures filled whatever the comparison said, fail the script with the comparison failing beside them. Where the
failure is not the very exception a library check raised on the suspect's values (nor raised from it), the
script runs once more with every comparison of the suspect's values made to hold; a failure that comes back the
same does not depend on them, and the run shows no evidence. A comparison whose sense cannot be told (``<`` on
an error: it holds when true, or when false) cannot be made to hold, and is taken as it is.

Scripts that compile need none of this: the eager re-run (``oracles.script``) already says whether the failure
goes with the compiled call. This is the same question for a Triton kernel, which has no eager twin.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from typing import Any, Callable, Iterator

from oracles.signature import normalize_message


def needs_a_held_run(evidence: Any, escaped: BaseException) -> bool:
    """Whether ``escaped``, a failed check with ``evidence`` (an ``EvidenceRecorder``) recorded, is to be told
    by a run with the comparisons held: its failing comparison's sense is known, and ``escaped`` is not the
    failure a library check raised on it."""

    comparison = evidence.failing_comparison()
    if comparison is None or comparison.held is None:
        return False
    return evidence.raised is None or not any(e is evidence.raised for e in _chain(escaped))


def fails_anyway(
    evidence: Any, escaped: BaseException, run_again: Callable[[], BaseException | None], seconds: float | None = None
) -> bool:
    """Whether the script, run again by ``run_again`` with its comparisons of the suspect's values held, fails
    as ``escaped`` did (same type, same message up to numbers and names). A script whose held comparisons let it
    run on (a training loop that stopped at the first mismatch) is stopped after ``seconds``, and then not told
    to fail anyway: the comparison stands."""

    try:
        with holding(evidence), _stopped_after(seconds):
            again = run_again()
    except _RanOn:  # stopped outside what catches the script's own exceptions
        return False
    return again is not None and type(again) is type(escaped) and _message(again) == _message(escaped)


class _RanOn(BaseException):
    """The run with the comparisons held outlasted its time."""


@contextlib.contextmanager
def _stopped_after(seconds: float | None) -> Iterator[None]:
    if seconds is None or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _RanOn()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def holding(evidence: Any) -> Iterator[None]:
    evidence.holding = True
    try:
        yield
    finally:
        evidence.holding = False


def _message(exc: BaseException) -> str:
    return normalize_message(str(exc))


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__
