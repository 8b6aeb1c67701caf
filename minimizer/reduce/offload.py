"""A candidate screen run in helper processes, so that the parent's CPU goes to proposing candidates.

With several workers the parent proposes, renders and screens every candidate while the candidates run; at
-j 8 on a GPU host it was the slowest part (the Triton example: 57 s of the parent's CPU in 107 s), and the static
screen a sixth of it. A screen is a pure function of the candidate's text (and of the best script so far), so
it can run anywhere: here in a small pool of spawned interpreters that import no torch, asked from the
tester's worker threads (which wait without holding the GIL) just before a candidate would run.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Callable

Screen = Callable[[str, str], "str | None"]  # (candidate text, best text so far) -> why it cannot show the bug

_INSTALLED: Screen | None = None


def _install(screen: Screen) -> None:
    global _INSTALLED
    _INSTALLED = screen


def _screen_here(text: str, best: str) -> tuple[str | None, float]:
    assert _INSTALLED is not None
    started = time.process_time()
    verdict = _INSTALLED(text, best)
    return verdict, time.process_time() - started


class OffloadedScreen:
    """``screen(text, best)`` answered by ``workers`` helper processes; where the pool cannot start or breaks,
    answered here (the verdicts are the same: only where the CPU time goes changes).

    ``screen`` must pickle (a module-level function, or an object of picklable parts). ``cpu_seconds`` sums the
    helpers' CPU time for the report.
    """

    def __init__(self, screen: Screen, workers: int) -> None:
        self.screen = screen
        self.cpu_seconds = 0.0
        self._lock = threading.Lock()
        try:
            self._pool: ProcessPoolExecutor | None = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),  # no fork of a parent that runs threads
                initializer=_install,
                initargs=(screen,),
            )
        except (OSError, ValueError):
            self._pool = None

    def __call__(self, text: str, best: str) -> str | None:
        pool = self._pool
        if pool is not None:
            try:
                verdict, seconds = pool.submit(_screen_here, text, best).result()
            except (BrokenProcessPool, RuntimeError):  # RuntimeError: the pool was shut down meanwhile
                self._pool = None
            else:
                with self._lock:
                    self.cpu_seconds += seconds
                return verdict
        return self.screen(text, best)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
