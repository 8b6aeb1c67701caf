"""The ground truth: a script run exactly as the user runs it, ``python script.py``, with no harness.

The run gets the interpreter minimizer runs under, the user's environment, a fresh folder holding the script
and links to the files beside the original (see ``minimizer.runner.workspace``) as its working directory, and
the same limits and isolation as a candidate. What failed is read off the traceback Python prints, and named
the way the oracles name an exception (``oracles.signature.exception_signature``), so the two compare.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from minimizer.runner.process import _TAIL_CHARS, USER_ENV, _PopenHandle, _signal_name, _tail, supervise

from minimizer.runner.run_types import DID_NOT_FINISH, Limits
from minimizer.runner.workspace import populate
from oracles.api import ExceptionInfo
from oracles.capture import assert_test_at, printed_exception
from oracles.signature import exception_signature

_TRACEBACK_SEARCH_CHARS = 1 << 20


def failure_kind(failure: str | None) -> str:
    """What two plain runs' failures are compared by where their messages need not read alike (a step that
    renamed what an assert reads, a test runner's report of a repro's failure): the exception type
    (``AssertionError`` of ``AssertionError: assert ...``); a script's ``sys.exit(1)`` as the SystemExit it
    raises; ``passes`` for none."""

    if failure is not None and failure.startswith("exit status"):
        return "SystemExit"
    return (failure or "passes").split(": ", 1)[0]


@dataclass
class PlainRun:
    """How one plain run ended. ``failure`` is ``None`` when it exited with status 0, else what the oracles
    would call it: ``Type: normalized message`` (the assert's test for an assertion), ``exit status N`` or
    ``killed by SIGNAL``."""

    returncode: int | None
    seconds: float
    failure: str | None = None
    message: str = ""  # the first line of the exception's message, for people
    timed_out: bool = False
    memory_exceeded: bool = False
    cancelled: bool = False
    stderr_tail: str = ""
    peak_mb: float | None = None  # the process's peak resident memory (None where it was killed)

    @property
    def fails(self) -> bool:
        return self.failure is not None

    def describe(self) -> str:
        """One line for people: ``passes`` or what failed."""

        if self.timed_out:
            return f"did not finish within {self.seconds:.0f} s"
        if self.memory_exceeded:
            return "exceeded the memory limit"
        if self.failure is None:
            return "passes"
        first = self.failure.split(": ", 1)[0]
        return f"{first}: {self.message}" if self.message else self.failure

    def to_json(self) -> dict:
        return {
            "returncode": self.returncode,
            "seconds": round(self.seconds, 2),
            "failure": self.failure,
            "message": self.message,
            "timed_out": self.timed_out,
            "peak_mb": None if self.peak_mb is None else round(self.peak_mb, 1),
        }


def run_plain(
    source: str,
    filename: str,
    beside: str | None,
    limits: Limits,
    *,
    cancel: threading.Event | None = None,
    python: str = sys.executable,
    args: tuple[str, ...] = (),
) -> PlainRun:
    """Run ``source`` as ``python FILENAME ARGS`` in a fresh folder beside (links to) ``beside``'s entries."""

    with tempfile.TemporaryDirectory(prefix="minimizer-plain-") as workdir:
        work = Path(workdir)
        script = work / filename
        script.write_text(source)
        if beside:
            populate(beside, work)
        stderr_path = Path(tempfile.mkdtemp(prefix="minimizer-plain-err-")) / "stderr"
        started = time.monotonic()
        with open(stderr_path, "wb") as err:
            proc = subprocess.Popen(
                [python, filename, *args],
                cwd=work,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=err,
                env=USER_ENV,
                start_new_session=True,
            )
        handle = _MeasuredHandle(proc)
        timed_out, memory_exceeded, cancelled = supervise(handle, limits, cancel)
        seconds = time.monotonic() - started
        # Enough to reach back to the last traceback's first line past Inductor's long logged tracebacks.
        stderr = _tail(stderr_path, _TRACEBACK_SEARCH_CHARS)
        stderr_path.unlink(missing_ok=True)
        stderr_path.parent.rmdir()
        run = PlainRun(
            proc.returncode,
            seconds,
            timed_out=timed_out,
            memory_exceeded=memory_exceeded,
            cancelled=cancelled,
            stderr_tail=stderr[-_TAIL_CHARS:],
            peak_mb=handle.peak_mb,
        )
        if timed_out:
            run.failure = DID_NOT_FINISH
        if timed_out or memory_exceeded or cancelled or proc.returncode == 0:
            return run
        signal_name = _signal_name(proc.returncode)
        exception = exception_from_stderr(stderr, script)
        if exception is not None:
            run.failure = exception_signature(exception)
            run.message = (exception.message.strip().splitlines() or [""])[0][:200]
        elif signal_name:
            run.failure = f"killed by {signal_name}"
        else:
            run.failure = f"exit status {proc.returncode}"
        return run


def cost_of(runs: list[PlainRun]) -> dict:
    """What running a script under plain python costs, over ``runs``: the slowest run's seconds and the largest
    peak memory."""

    peaks = [run.peak_mb for run in runs if run.peak_mb is not None]
    return {
        "seconds": round(max((run.seconds for run in runs), default=0.0), 2),
        "peak_mb": round(max(peaks), 1) if peaks else None,
    }


class _MeasuredHandle(_PopenHandle):
    """A plain run's process whose peak resident memory is read as it runs (``VmHWM``, the high-water mark of
    the process since its ``exec``; ``wait4``'s figure would count the parent's image the child was forked from).
    Read at each poll: a peak the process reached only in its last poll interval before exiting is missed."""

    peak_mb: float | None = None

    def poll(self) -> int | None:
        if self.proc.returncode is None:
            peak = _high_water_mb(self.pid)
            if peak is not None:
                self.peak_mb = max(self.peak_mb or 0.0, peak)
        return self.proc.poll()


def _high_water_mb(pid: int) -> float | None:
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def exception_from_stderr(stderr: str, script: Path) -> ExceptionInfo | None:
    """The exception that ended a Python process, from the traceback it printed (the last one), with the
    assert's test when it is a failed assert in ``script``; ``None`` if there is no traceback."""

    printed = printed_exception(stderr, script.name)
    if printed is None:
        return None
    head, message, last_line_in_script = printed
    assert_text = None
    if head == "AssertionError" and last_line_in_script is not None:
        assert_text = assert_test_at(script, last_line_in_script)
    return ExceptionInfo(type=head, message=message, assert_text=assert_text)

