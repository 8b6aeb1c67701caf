"""Where a reduction's time went: the seconds of each stage, and the runs of the whole original program among
them (the runs that cost most where the program is large), for the report."""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator


class StageClock:
    """Seconds per stage, in the order stages first ran; a stage that runs twice adds up."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self.original_runs = 0
        self.original_seconds = 0.0
        self._lock = threading.Lock()

    @contextmanager
    def stage(self, name: str) -> Iterator[None]:
        started = time.monotonic()
        try:
            yield
        finally:
            self.seconds[name] = self.seconds.get(name, 0.0) + time.monotonic() - started

    def ran_the_original(self, seconds: float) -> None:
        with self._lock:
            self.original_runs += 1
            self.original_seconds += seconds

    def to_json(self) -> dict:
        return {
            "stages": {name: round(seconds, 1) for name, seconds in self.seconds.items()},
            "original_runs": self.original_runs,
            "original_run_seconds": round(self.original_seconds, 1),
        }
