"""The file on disk is always a repro (``stages.plain_watch``): only steps plain python saw fail are written."""

from __future__ import annotations

import threading

from minimizer.runner.plain import PlainRun
from minimizer.stages.plain_watch import PlainWatch

FAILURE = "ValueError: boom"


class _PlainPython:
    """Plain runs that fail as the original does for texts with "boom" in them, each held until released."""

    def __init__(self):
        self.ran: list[str] = []
        self.release = threading.Semaphore(0)

    def __call__(self, text, cancel):
        self.ran.append(text)
        self.release.acquire()
        if cancel.is_set():
            return PlainRun(None, 0.0, cancelled=True)
        return PlainRun(1, 0.1, failure="ValueError: boom 2" if "boom" in text else None)


def test_only_steps_that_fail_under_plain_python_are_written_and_the_latest_offered_goes_first():
    plain, written = _PlainPython(), []
    watch = PlainWatch(plain, FAILURE, written.append)
    try:
        watch.offer("step 1 boom")
        while not plain.ran:
            threading.Event().wait(0.01)
        watch.offer("step 2 boom")  # replaced by step 3 before the first run is done: never run
        watch.offer("step 3 passes")
        plain.release.release()
        plain.release.release()
        watch.wait_until_idle(timeout=10)
        assert plain.ran == ["step 1 boom", "step 3 passes"]
        assert written == ["step 1 boom"]  # its message differs ("boom 2"): the exception type decides
        assert (watch.checked, watch.failed) == (2, 1)
    finally:
        watch.close()


def test_closing_cancels_the_run_going_and_writes_nothing_more():
    plain, written = _PlainPython(), []
    watch = PlainWatch(plain, FAILURE, written.append)
    watch.offer("step boom")
    while not plain.ran:
        threading.Event().wait(0.01)
    closer = threading.Thread(target=watch.close)
    closer.start()
    plain.release.release()
    closer.join(timeout=10)
    assert not closer.is_alive() and written == []
