"""The one place that decides whether a candidate is interesting: caches, counts, and runs candidates."""

from __future__ import annotations

import threading
from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")

# evaluate(script_text, cancel) -> True (still shows the bug), False, or None when ``cancel`` was set before
# it finished (the answer is unknown and is not cached).
Evaluate = Callable[[str, threading.Event], "bool | None"]


@dataclass
class TesterStats:
    oracle_calls: int = 0
    cache_hits: int = 0
    interesting: int = 0
    uninteresting: int = 0
    cancelled: int = 0
    screened_out: int = 0  # turned down by the static screen, never run


@dataclass
class _Slot(Generic[T]):
    index: int
    candidate: T
    text: str
    key: str
    answer: bool | None = None
    future: Future | None = None


class Tester(Generic[T]):
    """``consider`` a candidate: render it to a script, look its key up in the cache, else ask ``evaluate``.

    ``render`` turns a candidate into the script text that runs; ``key`` normalizes that text so that
    candidates differing only in layout share a verdict; ``screen`` says why a script cannot show the bug
    without running it (or ``None``: run it); ``evaluate`` runs a script and answers whether the pinned bug
    still shows. With ``jobs`` > 1, up to ``jobs`` candidates run at once in a sliding window; the
    answer is still the first interesting candidate in order (so it does not depend on ``jobs``), and once it
    is known the candidates still running after it are cancelled.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        render: Callable[[T], str],
        evaluate: Evaluate,
        *,
        key: Callable[[str], str] = lambda text: text,
        screen: Callable[[str], str | None] = lambda text: None,
        jobs: int = 1,
        on_result: Callable[[str, bool, bool], None] | None = None,
    ):
        self.render = render
        self.evaluate = evaluate
        self.key = key
        self.screen = screen
        self.jobs = max(1, jobs)
        self.stats = TesterStats()
        self._cache: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._on_result = on_result or (lambda text, interesting, cached: None)
        self._pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None

    def consider(self, candidate: T) -> bool:
        """Whether ``candidate`` still shows the bug (cached)."""

        return self.first_interesting([candidate]) is not None

    def first_interesting(self, candidates: Iterable[T]) -> tuple[int, T] | None:
        """The index and value of the first candidate that still shows the bug, or ``None``.

        Candidates are pulled lazily: at most ``jobs`` run at once. While the first unanswered one still runs,
        every worker that finishes takes the next candidate, so one slow candidate does not idle the others.
        """

        pending: Iterator[tuple[int, T]] = enumerate(candidates)
        window: deque[_Slot[T]] = deque()
        cancel = threading.Event()
        try:
            while True:
                self._fill(window, pending, cancel)
                if not window:
                    return None
                head = window[0]
                if head.future is not None and not head.future.done():
                    wait([s.future for s in window if s.future is not None], return_when=FIRST_COMPLETED)
                    continue
                window.popleft()
                if head.future is not None:
                    head.answer = head.future.result()
                if head.answer:
                    return head.index, head.candidate
        finally:
            cancel.set()  # whatever still runs behind the answer is no longer needed

    def _fill(self, window: deque[_Slot[T]], pending: Iterator[tuple[int, T]], cancel: threading.Event) -> None:
        running = sum(1 for slot in window if slot.future is not None and not slot.future.done())
        while running < self.jobs:
            if window and window[0].future is None and window[0].answer is not None:
                return  # the head is answered from the cache: no need to look further yet
            if any(_known_interesting(slot) for slot in window):
                return  # nothing after an interesting candidate can matter
            try:
                index, candidate = next(pending)
            except StopIteration:
                return
            text = self.render(candidate)
            slot = _Slot(index, candidate, text, self.key(text))
            cached = self._cache.get(slot.key)
            if cached is not None:
                self.stats.cache_hits += 1
                self._on_result(text, cached, True)
                slot.answer = cached
            elif self.screen(text) is not None:
                with self._lock:
                    self.stats.screened_out += 1
                    self._cache[slot.key] = slot.answer = False
            elif self._pool is None:
                slot.answer = self._evaluate_one(slot.text, slot.key, cancel)
            else:
                slot.future = self._pool.submit(self._evaluate_one, slot.text, slot.key, cancel)
                running += 1
            window.append(slot)

    def _evaluate_one(self, text: str, key: str, cancel: threading.Event) -> bool | None:
        if cancel.is_set():
            return None
        answer = self.evaluate(text, cancel)
        with self._lock:
            if answer is None:
                self.stats.cancelled += 1
                return None
            interesting = bool(answer)
            self._cache[key] = interesting
            self.stats.oracle_calls += 1
            if interesting:
                self.stats.interesting += 1
            else:
                self.stats.uninteresting += 1
            self._on_result(text, interesting, False)  # under the lock: observers count without races
        return interesting

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


def _known_interesting(slot: _Slot) -> bool:
    if slot.future is not None:
        return slot.future.done() and slot.future.result() is True
    return bool(slot.answer)
