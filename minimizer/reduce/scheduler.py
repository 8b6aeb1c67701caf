"""The reduction loop: run passes over the current best candidate until a whole round changes nothing.

It knows nothing about the candidate's format (source or graph): a pass proposes smaller candidates, the
tester says which still show the bug, ``size`` orders them.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from dataclasses import dataclass
from typing import Callable, Generic, Iterator, Protocol, Sequence, TypeVar

from minimizer.reduce.tester import Proposal, Tester

T = TypeVar("T")


@dataclass
class Pass(Generic[T]):
    """A named proposal function ``candidate -> iterator of smaller candidates``, with its measured payoff."""

    name: str
    propose: Callable[[T], Iterator[T]]
    tried: int = 0
    accepted: int = 0
    size_removed: int = 0

    @property
    def payoff(self) -> float:
        """Size removed per proposal tried so far."""

        return self.size_removed / self.tried if self.tried else 0.0

    @classmethod
    def of(cls, fn: Callable[[T], Iterator[T]]) -> Pass[T]:
        return cls(fn.__name__, fn)


class Observer(Protocol):
    def reduction_started(self, size: int) -> None: ...
    def pass_started(self, name: str) -> None: ...
    def accepted(self, text: str, size: int, pass_name: str) -> None: ...


@dataclass(frozen=True)
class _Where:
    """A question's place in a round: the pass (by its index in the round) and the proposal's index in it;
    ``follow_up`` for the follow-up asked before them; ``streak``: how many of the pass's questions were taken one
    after another on the way here, this one included if it is taken."""

    pass_index: int
    index: int
    follow_up: bool = False
    streak: int = 0


# A pass whose questions were taken this many times in a row is asked next for several of its proposals at once,
# built one on the other as the steps would be: two, then four, up to MAX_BATCH while they are taken. Cuts come
# in runs (a pass that bypassed one operator mostly bypasses the next; over the H100 runs of planted_miscompile.py
# a pass's question after one taken showed the bug 27 times in 38, after one turned down 11 in 44), and every
# step is one more answer the reduction waits for, whatever the number of workers.
BATCH_AFTER_STREAK = 2
MAX_BATCH = 16


class OutOfTime(Exception):
    """The reduction's time budget ran out; the best candidate so far stands."""


class Reducer(Generic[T]):
    """Greedy first-improvement reduction.

    After a pass's candidate at index ``i`` is accepted, the pass runs again on the new candidate starting at
    index ``i``: the earlier proposals were just rejected on an almost identical candidate, so they are
    unlikely to succeed now, and skipping them keeps ddmin-style passes at their current granularity. From the
    second round on, passes that removed most per proposal so far go first.

    ``settle(candidate)`` makes a candidate fit for passes to analyse (the source reducer re-parses it); it
    is applied to each candidate that becomes a base for proposals, taken or speculated, not to every one.

    ``follow_up(before, after)``, if given, proposes one candidate right after each accepted step (the
    source reducer removes the definitions the step left unread), so that what a step makes pointless goes at
    once instead of in the next round.

    Every question says what would be asked next if it were the one taken, so that a tester with several
    workers can speculate; the steps taken are the same for any number of workers.
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
        settle: Callable[[T], T] = lambda candidate: candidate,
    ):
        self.passes = list(passes)
        self.settle = settle
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
            current = self._run_round(self._ordered_passes(round_number), current)
            if self.tester.render(current) == before:
                return current

    def _ordered_passes(self, round_number: int) -> list[Pass[T]]:
        if round_number == 1:
            return self.passes
        # Most removed per proposal first: a proposal costs an oracle call. Stable sort: on ties the declared
        # order (structural, coarse passes first) stands.
        return sorted(self.passes, key=lambda p: -p.payoff)

    def _run_round(self, passes: list[Pass[T]], current: T) -> T:
        """Each pass in turn, until its proposals run out: after a step, the same pass goes on from where it was.

        The questions of the whole round go to the tester as one stream (a pass's proposals, then the next
        pass's), so that spare workers can speculate across the passes' boundaries.
        """

        if not passes:
            return current
        self.observer.pass_started(passes[0].name)
        where = _Where(0, 0)
        follow_up: T | None = None  # asked first after a step: the step's leftovers removed
        while True:
            self._check_time()
            questions = self._questions(passes, where, current, follow_up, counted=True)
            found = self.tester.first_interesting(questions, check_time=self._check_time)
            if found is None:
                return current
            question: Proposal[T] = found[1]
            where, follow_up = question.label, None
            if where.follow_up:
                current = self._accept(self._follow_up_name, question.candidate)
                continue
            reduction_pass = passes[where.pass_index]
            before, current = current, self._accept(reduction_pass.name, question.candidate)
            reduction_pass.accepted += 1
            reduction_pass.size_removed += max(self.size(before) - self.size(current), 0)
            follow_up = self._follow_up_of(before, current)

    def _questions(
        self, passes: list[Pass[T]], where: _Where, current: T, follow_up: T | None, *, counted: bool = False
    ) -> Iterator[Proposal[T]]:
        """What ``_run_round`` asks the tester on ``current``: the follow-up first if there is one, then the
        proposals of the pass at ``where`` from its index on, then those of the later passes.

        Each question is labelled with where it stands and says what would be asked next if it were taken.
        ``counted``: these are the questions really asked (counted in the passes' ``tried``, announced to the
        observer), not a speculation.
        """

        current = self.settle(current)
        base = self.tester.render(current) if self.tester.jobs > 1 else None  # for speculation only
        if follow_up is not None:
            then = functools.partial(self._questions, passes, where, follow_up, None)
            label = dataclasses.replace(where, follow_up=True)
            yield Proposal(follow_up, then, group=self._follow_up_name, label=label, base=base)
        for pass_index in range(where.pass_index, len(passes)):
            reduction_pass = passes[pass_index]
            if counted and pass_index > where.pass_index:
                self.observer.pass_started(reduction_pass.name)
            start, streak = (where.index, where.streak) if pass_index == where.pass_index else (0, 0)
            if streak >= BATCH_AFTER_STREAK:
                batch = self._batch(reduction_pass, current, start, min(2 ** (streak - 1), MAX_BATCH))
                if batch is not None:
                    if counted:
                        reduction_pass.tried += 1
                    here = _Where(pass_index, start, streak=streak + 1)
                    then = functools.partial(self._after_step, passes, here, current, batch)
                    yield Proposal(batch, then, group=f"{reduction_pass.name} (several)", label=here, base=base)
                    streak = 0  # turned down: the run is broken
            for index, candidate in self._fresh(reduction_pass, current, start, counted=counted):
                here = _Where(pass_index, index, streak=streak + 1)
                then = functools.partial(self._after_step, passes, here, current, candidate)
                yield Proposal(candidate, then, group=reduction_pass.name, label=here, base=base)
                streak = 0

    def _after_step(self, passes: list[Pass[T]], where: _Where, before: T, after: T) -> Iterator[Proposal[T]]:
        """What ``_run_round`` asks once the step ``before -> after`` is taken: its follow-up, then the proposals
        from ``where`` on. Built only when speculation gets this far (the follow-up's analysis is the costly
        part, and it is remembered per module for when the step is really taken)."""

        after = self.settle(after)
        yield from self._questions(passes, where, after, self._follow_up_of(before, after))

    def _batch(self, reduction_pass: Pass[T], current: T, start: int, size: int) -> T | None:
        """The candidate ``size`` steps of ``reduction_pass`` would reach from ``current`` if each of its next
        proposals from ``start`` on were taken in turn (the pass run on each result, as after a step), or None if it
        has fewer than two."""

        candidate, taken = current, 0
        while taken < size:
            base = self.settle(candidate) if taken else candidate  # ``current`` is settled already
            step = next(self._fresh(reduction_pass, base, start, counted=False), None)
            if step is None:
                break
            (start, candidate), taken = step, taken + 1
        return candidate if taken >= 2 else None

    def _accept(self, pass_name: str, candidate: T) -> T:
        candidate = self.settle(candidate)
        text = self.tester.render(candidate)
        self._visited.add(self.tester.key(text))
        self.observer.accepted(text, self.size(candidate), pass_name)
        return candidate

    @property
    def _follow_up_name(self) -> str:
        return getattr(self.follow_up, "__name__", "follow_up")

    def _follow_up_of(self, before: T, after: T) -> T | None:
        """The follow-up's candidate after the step ``before -> after``, if it is new and no larger."""

        if self.follow_up is None:
            return None
        candidate = self.follow_up(before, after)
        if candidate is None or not self._is_new_and_no_larger(candidate, self.size(after)):
            return None
        return candidate

    def _fresh(self, reduction_pass: Pass[T], current: T, start: int, *, counted: bool = True) -> Iterator[tuple[int, T]]:
        """The pass's proposals from index ``start`` on, numbered, minus ones already accepted once (no cycles)
        and ones that grew.

        A pass whose proposals can ``skip`` (see `minimizer.source.passes.candidates.CandidateStream`) numbers them by
        ``position`` among all it produced and skips to ``start`` without building them; otherwise the
        proposals are numbered as they come out of this filter and the first ``start`` are dropped.
        """

        limit = self.size(current)
        proposals = reduction_pass.propose(current)
        resumable = callable(getattr(proposals, "skip", None))
        if resumable:
            proposals.skip(start)  # type: ignore[attr-defined]
        kept = 0
        for candidate in proposals:
            self._check_time()
            if counted:
                reduction_pass.tried += 1
            if not self._is_new_and_no_larger(candidate, limit):
                continue
            index = proposals.position if resumable else kept  # type: ignore[attr-defined]
            kept += 1
            if index >= start:
                yield index, candidate

    def _is_new_and_no_larger(self, candidate: T, limit: int) -> bool:
        """Not larger than ``limit`` and never accepted before (accepting it again would cycle)."""

        return self.size(candidate) <= limit and self.tester.key(self.tester.render(candidate)) not in self._visited

    def _check_time(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime
