"""The file on disk is always a repro: each step the reduction accepts is run under plain python in the
background, the latest first, one run at a time, and only a step plain python has seen fail as the original
fails (the same exception type, or exit status) is written. Ctrl-C, SIGTERM or a crash of the tool then leaves
a file that fails under plain python, not one that shows the bug only under minimizer's oracles (a harness seed
the script does not set, a silent value a later statement states).

Steps come faster than plain runs: a step offered while a run is going waits, and a newer one replaces it, so
the watch runs at most one plain run at a time and checks the latest step each time it is free, resting after
each run as long as it took.
"""

from __future__ import annotations

import threading
from typing import Callable

from minimizer.runner.plain import PlainRun, failure_kind


_MOST_REST_SECONDS = 30.0


class PlainWatch:
    """Checks offered steps with ``run_plain`` (text, cancel event) against the original's plain ``failure``,
    and calls ``confirmed`` with each that fails so, from its own thread."""

    def __init__(
        self, run_plain: Callable[[str, threading.Event], PlainRun], failure: str, confirmed: Callable[[str], None]
    ):
        self._run_plain, self._kind, self._confirmed = run_plain, failure_kind(failure), confirmed
        self._latest: str | None = None
        self._busy = False
        self._closed = False
        self._cancel = threading.Event()
        self._changed = threading.Condition()
        self.checked = self.failed = 0
        self._thread = threading.Thread(target=self._watch, name="plain-watch", daemon=True)
        self._thread.start()

    def offer(self, text: str) -> None:
        with self._changed:
            self._latest = text
            self._changed.notify()

    def wait_until_idle(self, timeout: float | None = None) -> None:
        """Until every offered step was checked (tests, and a final look before the tool writes the last in-progress file)."""

        with self._changed:
            self._changed.wait_for(lambda: self._closed or (self._latest is None and not self._busy), timeout)

    def close(self) -> None:
        """Stop: a plain run going is cancelled, nothing more is written."""

        with self._changed:
            self._closed = True
            self._cancel.set()
            self._changed.notify_all()
        self._thread.join(timeout=30)

    def _watch(self) -> None:
        while True:
            with self._changed:
                self._changed.wait_for(lambda: self._closed or self._latest is not None)
                if self._closed:
                    return
                text, self._latest, self._busy = self._latest, None, True
            run = self._run_plain(text, self._cancel)
            fails = not run.cancelled and failure_kind(run.failure) == self._kind and run.failure is not None
            with self._changed:
                self.checked += 1
                self.failed += fails
                if fails and not self._closed:
                    self._confirmed(text)
            # Half the time at most: the candidates need the cores more than the file on disk needs the last step.
            self._cancel.wait(min(run.seconds, _MOST_REST_SECONDS))
            with self._changed:
                self._busy = False
                self._changed.notify_all()
