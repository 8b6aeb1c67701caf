"""The one place that decides whether a candidate is interesting: caches, counts, and runs candidates.

With several workers it speculates. The caller asks a sequence of candidates and takes the first that still
shows the bug; a candidate may also say what the caller will ask next if it is the one taken
(``Proposal.next_if_interesting``). Those questions form a tree: after each candidate either the next one of its
sequence (it did not show the bug) or the first of its follow-on sequence (it did). Idle workers take the
questions the caller is likeliest to ask, by the chance that a candidate shows the bug (learnt per group of
proposals from the answers so far), and their answers wait in the cache. The caller still gets exactly the
answer it would get with one worker: the tree only decides what runs early, never what is returned.
"""

from __future__ import annotations

import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Callable, Generic, Iterable, Iterator, TypeVar, Union

from minimizer.reduce.change import change_key

T = TypeVar("T")

# evaluate(script_text, cancel) -> True (still shows the bug), False, or None when ``cancel`` was set before
# it finished (the answer is unknown and is not cached).
Evaluate = Callable[[str, threading.Event], "bool | None"]

# Below this chance of being asked, a question is not worth a worker (nor the parent's time to render it).
MIN_CHANCE = 0.1
# A question waiting for a worker takes one from a run this many times less likely to be needed.
PREEMPT_FACTOR = 3.0
# Where every run starts a CUDA context, a run started and cancelled costs the others too: the driver creates
# contexts one after another, so at -j 8 a candidate waited 0.5-0.7 s to start (median) against 0.03 s at -j 1.
# Speculating only on likelier questions, and preempting less, cut that to 0.12-0.15 s and the reduction of
# planted_miscompile.py to 66 tokens from 62 to 54 s on the H100 host (docs/history.md, GPU part); on the CPU stand-in the
# defaults above are faster.
MIN_CHANCE_WITH_CUDA = 0.25
PREEMPT_FACTOR_WITH_CUDA = 10.0


@dataclass(frozen=True)
class Speculation:
    """How freely questions are run ahead of need: the least chance of being asked that earns a worker, and how
    many times likelier a waiting question must be to take the worker of a running one."""

    min_chance: float
    preempt_factor: float


def speculation_for(device: str, resident: bool = False) -> Speculation:
    """The settings for candidates that run on ``device`` (as a run reports it: ``cpu``, ``cuda (NAME)``); with
    ``resident`` workers (``minimizer.runner.resident``) a run started and cancelled creates no CUDA context, so
    questions run ahead as freely as on the CPU."""

    if device.startswith("cuda") and not resident:
        return Speculation(MIN_CHANCE_WITH_CUDA, PREEMPT_FACTOR_WITH_CUDA)
    return Speculation(MIN_CHANCE, PREEMPT_FACTOR)


@dataclass
class TesterStats:
    oracle_calls: int = 0
    cache_hits: int = 0
    interesting: int = 0
    uninteresting: int = 0
    cancelled: int = 0
    screened_out: int = 0  # turned down by the static screen, never run


@dataclass(frozen=True)
class Proposal(Generic[T]):
    """A candidate and, for speculation, what the caller will ask next if this is the candidate it takes.

    ``group``: proposals alike (from one pass, say), whose chance to show the bug the tester learns from the
    answers so far (without one: the call's ``p_interesting``); ``label``: anything the caller wants back;
    ``base``: the text the candidate was cut from, so that the same cut asked again on a later base is recognised
    and its earlier answer predicts this one (`minimizer.reduce.change`).
    """

    candidate: T
    next_if_interesting: Callable[[], Iterable[Union["Proposal[T]", T]]] | None = None
    group: str | None = None
    label: object = None
    base: str | None = None


@dataclass(eq=False)
class _Sequence:
    """Questions asked one after another until one shows the bug; pulled lazily from ``make()``."""

    make: Callable[[], Iterable]
    parent: _Node | None  # must show the bug for this sequence to be asked (None: the caller's own sequence)
    nodes: list[_Node] = field(default_factory=list)
    items: Iterator | None = None
    exhausted: bool = False


@dataclass(eq=False)
class _Node:
    sequence: _Sequence
    position: int
    item: object  # as the caller gave it: a candidate or a Proposal
    chance: float  # of showing the bug
    text: str
    key: str
    group: str | None = None
    # What the last question of its group on the way to it got (True: it showed the bug and was taken; None:
    # none asked yet): a pass's cuts come in runs, taken one after another or turned down one after another.
    after: bool | None = None
    change: str | None = None  # what it changed in its base (`change_key`), where the caller said the base
    from_cache: bool = False
    needed_a_run: bool = False  # unanswered when added: neither cached nor screened out


@dataclass(eq=False)
class _Job:
    future: Future
    cancel: threading.Event
    nodes: list[_Node]  # the questions waiting for its answer, in this call's tree or an earlier call's


class Tester(Generic[T]):
    """``consider`` a candidate: render it to a script, look its key up in the cache, else ask ``evaluate``.

    ``render`` turns a candidate into the script text that runs; ``key`` normalizes that text so that
    candidates differing only in layout share a verdict; ``screen`` says why a script cannot show the bug
    without running it (or ``None``: run it); ``evaluate`` runs a script and answers whether the pinned bug
    still shows. With ``jobs`` > 1, up to ``jobs`` candidates run at once, chosen as the module docstring says;
    the answer is still the first interesting candidate in order (so it does not depend on ``jobs``), and work
    that can no longer matter is cancelled. ``speculate=False`` keeps spare workers on the caller's own
    sequence, in order (for measuring what speculation buys). ``screen_in_workers``: with several workers, the
    worker that would run a candidate screens it first (for a screen that runs in another process).
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
        speculate: bool = True,
        screen_in_workers: bool = False,
        speculation: Speculation | None = None,
    ):
        self.render = render
        # Read when built, not when imported: bench/replay.py sets the module's defaults for a replay.
        self.speculation = speculation or Speculation(MIN_CHANCE, PREEMPT_FACTOR)
        self.evaluate = evaluate
        self.key = key
        self.screen = screen
        self.jobs = max(1, jobs)
        self.speculate = speculate
        self.stats = TesterStats()
        self._cache: dict[str, bool] = {}
        self._lock = threading.Lock()
        self._on_result = on_result or (lambda text, interesting, cached: None)
        self._pool = ThreadPoolExecutor(self.jobs) if self.jobs > 1 else None
        self._running: dict[str, _Job] = {}  # by key; a run may outlive the call that started it
        self._dying: list[_Job] = []  # cancelled, still holding a worker until their process is gone
        self._group_record: dict[str, list[int]] = {}  # group -> [questions run, of which interesting]
        # The same, apart by what the group's question before got (`_Node.after`); and that answer on the
        # caller's own path, for the first questions of its next call.
        self._after_record: dict[tuple[str, bool], list[int]] = {}
        self._last_answer: dict[str, bool] = {}
        # With several workers, a candidate may be screened by the worker about to run it instead of by the caller
        # (the screen can then wait on another process without holding up proposals); the answer is the same.
        self._screen_in_workers = screen_in_workers and self._pool is not None
        self._screened: set[str] = set()  # keys the screen turned down: no run, nothing to learn from
        # A cut answered on one base mostly answers the same on the next (a step elsewhere rarely matters to it):
        # the last answer per change, and how often a change answered again as before ([runs, interesting] after
        # an interesting / a dull earlier answer). Speculation follows these instead of its group's rate.
        self._change_of_key: dict[str, str] = {}
        self._change_answer: dict[str, bool] = {}
        self._again: dict[bool, list[int]] = {True: [0, 0], False: [0, 0]}

    def consider(self, candidate: T) -> bool:
        """Whether ``candidate`` still shows the bug (cached)."""

        return self.first_interesting([candidate]) is not None

    def first_interesting(
        self, candidates: Iterable[Proposal[T] | T], *, p_interesting: float = 0.5, check_time: Callable[[], None] | None = None
    ):
        """The index and item of the first of ``candidates`` whose candidate still shows the bug, or ``None``.

        Candidates (plain, or ``Proposal``s that say what comes next) are pulled lazily. With one worker they
        run one by one in order. With more, idle workers run the questions likeliest to be asked next, this
        sequence's later candidates or the follow-on ones of a candidate still running, each of which shows the
        bug with the chance learnt for its group (``p_interesting`` if it has none). Work for the follow-on
        questions of the answer keeps running. The item comes back as given: a plain candidate, or its
        ``Proposal``. ``check_time`` raises when the time is up; asked while runs are awaited too, since runs
        started before may outlast it (it ends no run: ``close`` does).
        """

        if not self.speculate:
            p_interesting = 0.0  # every later candidate of the caller's sequence counts as certain to be asked
        main = _Sequence(lambda: candidates, None)
        sequences = [main]
        found: _Node | None = None
        try:
            while True:
                self._reap()
                done, found = self._outcome(main)
                if done:
                    return None if found is None else (found.position, found.item)
                self._cancel_unneeded()
                if not self._start_likeliest(sequences, p_interesting):
                    if check_time is not None:
                        check_time()
                    self._wait(_WAKE_TO_CHECK_TIME if check_time is not None else None)
        finally:
            self._record_asked(main, found)

    # --- the tree of questions -------------------------------------------------------------------------------

    def _outcome(self, main: _Sequence) -> tuple[bool, _Node | None]:
        """(decided, the first interesting node of the caller's sequence or None)."""

        for node in main.nodes:
            answer = self._cache.get(node.key)
            if answer is None:
                return False, None
            if answer:
                return True, node
        return main.exhausted, None

    def _chance(self, sequence: _Sequence, position: int) -> float:
        """The chance that the caller asks the question at ``position`` of ``sequence``, given what is known."""

        chance = 1.0
        while True:
            for earlier in sequence.nodes[:position]:
                answer = self._cache.get(earlier.key)
                if answer:
                    return 0.0
                if answer is None:
                    chance *= 1 - self._likelihood(earlier)
            parent = sequence.parent
            if parent is None:
                return chance
            answer = self._cache.get(parent.key)
            if answer is False:
                return 0.0
            if answer is None:
                chance *= self._likelihood(parent)
            sequence, position = parent.sequence, parent.position

    def _start_likeliest(self, sequences: list[_Sequence], p: float) -> bool:
        """Take one step on the likeliest question: start its run if a worker is free, or add it to the tree (its
        answer may be cached, or already on the way from an earlier speculation); whether anything changed.

        At most ``jobs`` added questions wait for a worker, so the tree grows only a little ahead of the runs.
        """

        free = self.jobs - self._busy_workers()
        best: tuple[float, _Sequence | _Node] | None = None
        waiting, waiting_best = 0, 0.0
        # One worker (or no speculation): only the caller's own sequence, in order.
        for sequence in sequences if self.jobs > 1 and self.speculate else sequences[:1]:
            for node in sequence.nodes:  # added but not run yet, or run and cancelled: waits for a worker
                if node.key not in self._cache and node.key not in self._running:
                    chance = self._chance(sequence, node.position)
                    waiting += chance > 0
                    waiting_best = max(waiting_best, chance)
                    if free > 0:
                        best = max(best, (chance, node), key=_by_chance)
            if not sequence.exhausted:
                best = max(best, (self._chance(sequence, len(sequence.nodes)), sequence), key=_by_chance)
        if free <= 0 and not self._dying and self._preempt_for(waiting_best):
            return True  # one at a time: the worker comes free when the cancelled run's process is gone
        if best is None or best[0] < self.speculation.min_chance:
            return False
        what = best[1]
        if isinstance(what, _Node):
            self._run(what)
            return True
        if free <= 0 and waiting >= self.jobs:
            return False
        self._add_next(what, sequences, p)
        return True

    def _preempt_for(self, chance: float) -> bool:
        """Cancel the least likely run if a question waiting for a worker is much likelier; whether it did."""

        if not self._running:
            return False
        key, job_chance = min(((k, self._chance_of_job(j)) for k, j in self._running.items()), key=lambda kc: kc[1])
        if chance <= self.speculation.preempt_factor * job_chance:
            return False
        self._cancel(key)
        return True

    def _add_next(self, sequence: _Sequence, sequences: list[_Sequence], p: float) -> None:
        if sequence.items is None:
            sequence.items = iter(sequence.make())
        try:
            item = next(sequence.items)
        except StopIteration:
            sequence.exhausted = True
            return
        proposal = item if isinstance(item, Proposal) else Proposal(item)
        after = self._answer_before(proposal.group, sequence)
        chance = 0.0 if not self.speculate else self._group_chance(proposal.group, after, p)
        text = self.render(proposal.candidate)
        node = _Node(sequence, len(sequence.nodes), item, chance, text, self.key(text), proposal.group, after)
        if self.speculate and self._pool is not None and proposal.base is not None:
            node.change = change_key(proposal.base, text)
            if node.change is not None:
                self._change_of_key.setdefault(node.key, node.change)
                if node.key in self._cache and node.key not in self._screened:
                    self._change_answer[node.change] = self._cache[node.key]
        sequence.nodes.append(node)
        if proposal.next_if_interesting is not None:
            sequences.append(_Sequence(proposal.next_if_interesting, node))
        if node.key in self._cache:
            node.from_cache = True  # counted as a cache hit once the caller has asked it
        elif node.key in self._running:
            self._running[node.key].nodes.append(node)  # an earlier speculation asked it: its answer is on the way
        elif not self._screen_in_workers and self.screen(text) is not None:
            self._turn_down(node.key)
            return
        node.needed_a_run = not node.from_cache

    def _run(self, node: _Node) -> None:
        cancel = threading.Event()
        if self._pool is None:
            self._evaluate_one(node.text, node.key, cancel)
            return
        future = self._pool.submit(self._evaluate_one, node.text, node.key, cancel)
        self._running[node.key] = _Job(future, cancel, [node])

    # --- workers ---------------------------------------------------------------------------------------------

    def _busy_workers(self) -> int:
        return len(self._running) + len(self._dying)

    def _reap(self) -> None:
        for key, job in list(self._running.items()):
            if job.future.done():
                del self._running[key]
        self._dying = [job for job in self._dying if not job.future.done()]

    def _wait(self, timeout: float | None) -> None:
        futures = [job.future for job in (*self._running.values(), *self._dying)]
        if futures:
            wait(futures, timeout=timeout, return_when=FIRST_COMPLETED)

    def _cancel(self, key: str) -> None:
        job = self._running.pop(key)
        job.cancel.set()
        self._dying.append(job)

    def _chance_of_job(self, job: _Job) -> float:
        return max(self._chance(node.sequence, node.position) for node in job.nodes)

    def _cancel_unneeded(self) -> None:
        """Cancel the runs whose questions can no longer be asked (an answer on their path says otherwise).

        A run started by an earlier call is judged in that call's tree, where it may well lie on the path the
        reduction is taking: it keeps running until an answer rules it out.
        """

        for key, job in list(self._running.items()):
            if self._chance_of_job(job) == 0:
                self._cancel(key)

    def _record_asked(self, main: _Sequence, found: _Node | None) -> None:
        """Count the caller's questions (those up to its answer) answered from the cache, and learn from those
        that needed a run how often questions of their group show the bug."""

        for node in main.nodes if found is None else main.nodes[: found.position + 1]:
            if node.from_cache:
                self.stats.cache_hits += 1
                self._on_result(node.text, self._cache[node.key], True)
            if node.group is None:
                continue
            if node.needed_a_run and node.key not in self._screened:
                records = [self._group_record.setdefault(node.group, [0, 0])]
                if node.after is not None:
                    records.append(self._after_record.setdefault((node.group, node.after), [0, 0]))
                for record in records:
                    record[0] += 1
                    record[1] += node is found
            self._last_answer[node.group] = node is found

    def _likelihood(self, node: _Node) -> float:
        """The chance that ``node`` shows the bug: after the answer its change got on an earlier base, how often a
        change answered the same again (a prior of three in four); without one, its group's rate."""

        earlier = None if node.change is None else self._change_answer.get(node.change)
        if earlier is None:
            return node.chance
        runs, interesting = self._again[earlier]
        return (interesting + (3 if earlier else 1)) / (runs + 4)

    def _learn_change(self, key: str, interesting: bool) -> None:
        """Remember the answer of the change behind ``key``, and whether it repeated the change's earlier one."""

        change = self._change_of_key.get(key)
        if change is None:
            return
        earlier = self._change_answer.get(change)
        if earlier is not None:
            self._again[earlier][0] += 1
            self._again[earlier][1] += interesting
        self._change_answer[change] = interesting

    def _answer_before(self, group: str | None, sequence: _Sequence) -> bool | None:
        """What the last question of ``group`` got on the path to the next question of ``sequence``: one earlier in
        a sequence was turned down on that path, a parent was taken; at the root, the caller's own last answer."""

        if group is None:
            return None
        earlier = sequence.nodes
        while True:
            if any(node.group == group for node in earlier):
                return False
            parent = sequence.parent
            if parent is None:
                return self._last_answer.get(group)
            if parent.group == group:
                return True
            sequence, earlier = parent.sequence, parent.sequence.nodes[: parent.position]

    def _group_chance(self, group: str | None, after: bool | None, default: float) -> float:
        """How often questions of ``group`` showed the bug (Laplace's rule: a half before anything is known); apart
        by what the group's question before got, with the group's rate as the prior, where that is known."""

        if group is None:
            return default
        runs, interesting = self._group_record.get(group, (0, 0))
        rate = (interesting + 1) / (runs + 2)
        if after is None:
            return rate
        runs, interesting = self._after_record.get((group, after), (0, 0))
        return (interesting + 2 * rate) / (runs + 2)

    def _turn_down(self, key: str) -> None:
        """The screen said the candidate cannot show the bug: not interesting, without a run."""

        with self._lock:
            self.stats.screened_out += 1
            self._screened.add(key)
            self._cache[key] = False

    def _evaluate_one(self, text: str, key: str, cancel: threading.Event) -> bool | None:
        if cancel.is_set():
            return None
        if self._screen_in_workers and self.screen(text) is not None:
            self._turn_down(key)
            return False
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
            self._learn_change(key, interesting)
            self._on_result(text, interesting, False)  # under the lock: observers count without races
        return interesting

    def close(self) -> None:
        for key in list(self._running):
            self._cancel(key)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


# How often a caller that must stop in time is asked whether it must, while runs are awaited (seconds).
_WAKE_TO_CHECK_TIME = 1.0


def _by_chance(option: tuple[float, object] | None) -> float:
    return -1.0 if option is None else option[0]
