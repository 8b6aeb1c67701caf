"""The reduction loop: run passes over the current best candidate until a whole round changes nothing.

It knows nothing about the candidate's format (source or graph): a pass proposes smaller candidates, the
tester says which still show the bug, ``size`` orders them.
"""

from __future__ import annotations

import itertools
import time
from dataclasses import dataclass
from typing import Callable, Generic, Iterator, Protocol, Sequence, TypeVar

from minimizer.reduce.tester import Tester

T = TypeVar("T")


@dataclass
class Pass(Generic[T]):
    """A named proposal function ``candidate -> iterator of smaller candidates``, with its measured payoff."""

    name: str
    propose: Callable[[T], Iterator[T]]
    tried: int = 0
    accepted: int = 0
    size_removed: int = 0

    @classmethod
    def of(cls, fn: Callable[[T], Iterator[T]]) -> Pass[T]:
        return cls(fn.__name__, fn)


class Observer(Protocol):
    def reduction_started(self, size: int) -> None: ...
    def pass_started(self, name: str) -> None: ...
    def accepted(self, text: str, size: int, pass_name: str) -> None: ...


class OutOfTime(Exception):
    """The reduction's time budget ran out; the best candidate so far stands."""


class Reducer(Generic[T]):
    """Greedy first-improvement reduction.

    After a pass's candidate at index ``i`` is accepted, the pass runs again on the new candidate starting at
    index ``i``: the earlier proposals were just rejected on an almost identical candidate, so they are
    unlikely to succeed now, and skipping them keeps ddmin-style passes at their current granularity. Passes
    that removed most in the previous round go first.

    ``follow_up(before, after)``, if given, proposes one candidate right after each accepted step (the
    source reducer removes the definitions the step left unread), so that what a step makes pointless goes at
    once instead of in the next round.
    """

    def __init__(
        self,
        passes: Sequence[Pass[T]],
        tester: Tester[T],
        size: Callable[[T], int],
        observer: Observer,
        *,
        deadline: float | None = None,
        follow_up: Callable[[T, T], T | None] | None = None,
    ):
        self.passes = list(passes)
        self.follow_up = follow_up
        self.tester = tester
        self.size = size
        self.observer = observer
        self.deadline = deadline
        self._visited: set[str] = set()

    def reduce(self, current: T) -> T:
        """Return the smallest interesting candidate reached from ``current`` (which must be interesting)."""

        self._visited.add(self.tester.key(self.tester.render(current)))
        self.observer.reduction_started(self.size(current))
        round_number = 0
        while True:
            round_number += 1
            before = self.tester.render(current)
            for reduction_pass in self._ordered_passes(round_number):
                self.observer.pass_started(reduction_pass.name)
                current = self._run_pass(reduction_pass, current)
            if self.tester.render(current) == before:
                return current

    def _ordered_passes(self, round_number: int) -> list[Pass[T]]:
        if round_number == 1:
            return self.passes
        # Stable sort: on ties the declared order (cheap, coarse passes first) stands.
        return sorted(self.passes, key=lambda p: -p.size_removed)

    def _run_pass(self, reduction_pass: Pass[T], current: T) -> T:
        reduction_pass.size_removed = 0
        skip = 0
        while True:
            self._check_time()
            proposals = itertools.islice(self._fresh(reduction_pass, current), skip, None)
            found = self.tester.first_interesting(proposals)
            if found is None:
                return current
            offset, candidate = found
            skip += offset
            before, current = current, self._accept(reduction_pass.name, candidate)
            reduction_pass.accepted += 1
            reduction_pass.size_removed += max(self.size(before) - self.size(current), 0)
            current = self._follow_up(before, current)

    def _accept(self, pass_name: str, candidate: T) -> T:
        text = self.tester.render(candidate)
        self._visited.add(self.tester.key(text))
        self.observer.accepted(text, self.size(candidate), pass_name)
        return candidate

    def _follow_up(self, before: T, after: T) -> T:
        if self.follow_up is None:
            return after
        candidate = self.follow_up(before, after)
        if candidate is None or not self._is_new_and_no_larger(candidate, self.size(after)):
            return after
        if self.tester.first_interesting(iter([candidate])) is None:
            return after
        return self._accept(getattr(self.follow_up, "__name__", "follow_up"), candidate)

    def _fresh(self, reduction_pass: Pass[T], current: T) -> Iterator[T]:
        """The pass's proposals, minus ones already accepted once (no cycles) and ones that grew."""

        limit = self.size(current)
        for candidate in reduction_pass.propose(current):
            self._check_time()
            reduction_pass.tried += 1
            if self._is_new_and_no_larger(candidate, limit):
                yield candidate

    def _is_new_and_no_larger(self, candidate: T, limit: int) -> bool:
        """Not larger than ``limit`` and never accepted before (accepting it again would cycle)."""

        return self.size(candidate) <= limit and self.tester.key(self.tester.render(candidate)) not in self._visited

    def _check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime
