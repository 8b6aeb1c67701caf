"""The one place that decides whether a candidate is interesting: caches, counts, and runs candidates."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Iterator, TypeVar

T = TypeVar("T")


@dataclass
class TesterStats:
    oracle_calls: int = 0
    cache_hits: int = 0
    interesting: int = 0
    uninteresting: int = 0


class Tester(Generic[T]):
    """``consider`` a candidate: render it to a script, look its key up in the cache, else ask ``evaluate``.

    ``render`` turns a candidate into the script text that runs; ``key`` normalizes that text so that
    candidates differing only in layout share a verdict; ``evaluate`` runs a script and answers whether the
    pinned bug still shows. ``jobs`` candidates are evaluated at once; the answer is still the first
    interesting candidate in order, so the result does not depend on ``jobs``.
    """

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        render: Callable[[T], str],
        evaluate: Callable[[str], bool],
        *,
        key: Callable[[str], str] = lambda text: text,
        jobs: int = 1,
        on_result: Callable[[str, bool, bool], None] | None = None,
    ):
        self.render = render
        self.evaluate = evaluate
        self.key = key
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

        Candidates are pulled lazily, ``jobs`` uncached ones at a time.
        """

        iterator: Iterator[tuple[int, T]] = enumerate(candidates)
        while True:
            batch: list[tuple[int, T, str, str]] = []
            for index, candidate in iterator:
                text = self.render(candidate)
                key = self.key(text)
                cached = self._cache.get(key)
                if cached is not None:
                    self.stats.cache_hits += 1
                    self._on_result(text, cached, True)
                    if cached and not batch:
                        return index, candidate
                    if cached:
                        batch.append((index, candidate, text, key))
                        break
                    continue
                batch.append((index, candidate, text, key))
                if len(batch) >= self.jobs:
                    break
            if not batch:
                return None
            verdicts = self._evaluate_all([(text, key) for _, _, text, key in batch])
            for (index, candidate, _, _), interesting in zip(batch, verdicts):
                if interesting:
                    return index, candidate

    def _evaluate_all(self, items: list[tuple[str, str]]) -> list[bool]:
        todo = [(text, key) for text, key in items if key not in self._cache]
        if self._pool is not None and len(todo) > 1:
            results = list(self._pool.map(lambda item: self._evaluate_one(*item), todo))
        else:
            results = [self._evaluate_one(text, key) for text, key in todo]
        del results  # stored in the cache by _evaluate_one
        return [self._cache[key] for _, key in items]

    def _evaluate_one(self, text: str, key: str) -> bool:
        interesting = bool(self.evaluate(text))
        with self._lock:
            self._cache[key] = interesting
            self.stats.oracle_calls += 1
            if interesting:
                self.stats.interesting += 1
            else:
                self.stats.uninteresting += 1
        self._on_result(text, interesting, False)
        return interesting

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
