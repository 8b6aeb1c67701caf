"""The scheduler and tester on a toy format: lists of ints, 'interesting' while a predicate holds."""

import random
import time
from typing import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.reduce.scheduler import Pass, Reducer
from minimizer.reduce.tester import Proposal, Tester


class Events:
    def __init__(self):
        self.accepted = []

    def reduction_started(self, size):
        pass

    def pass_started(self, name):
        pass

    def accepted(self, text, size, pass_name):  # noqa: F811 - observer protocol name
        pass


class Recorder(Events):
    def __init__(self):
        self.steps = []

    def accepted(self, text, size, pass_name):
        self.steps.append((text, pass_name))


def delete_one(items: tuple) -> Iterator[tuple]:
    for i in range(len(items)):
        yield items[:i] + items[i + 1 :]


def halve_each(items: tuple) -> Iterator[tuple]:
    for i, value in enumerate(items):
        if value > 1:
            yield items[:i] + (value // 2,) + items[i + 1 :]


def drop_orphans(before, after):
    # A negative item is the "definition" of its positive twin: once the twin is gone, try dropping it too.
    orphans = [x for x in after if x < 0 and -x not in after]
    return tuple(x for x in after if x not in orphans) if orphans else None


def reduce(items, predicate, jobs=1):
    calls = []

    def evaluate(text, cancel):
        calls.append(text)
        return predicate(eval(text))

    tester = Tester(repr, evaluate, jobs=jobs)
    observer = Recorder()
    reducer = Reducer([Pass.of(delete_one), Pass.of(halve_each)], tester, lambda t: len(t) * 1000 + sum(t), observer)
    result = reducer.reduce(tuple(items))
    tester.close()
    return result, tester, observer, calls


def test_follow_up_is_tried_right_after_each_step():
    # Items come in pairs (n, -n); a step that deletes n leaves -n pointless, and the follow-up drops it at once.
    calls = []

    def evaluate(text, cancel):
        calls.append(text)
        return 7 in eval(text)

    tester = Tester(repr, evaluate)
    observer = Recorder()
    reducer = Reducer([Pass.of(delete_one)], tester, len, observer, follow_up=drop_orphans)
    assert reducer.reduce((1, -1, 7, -7, 3, -3)) == (7,)
    tester.close()
    names = [name for _, name in observer.steps]
    assert names[:2] == ["delete_one", "drop_orphans"]  # deleting 1 orphans -1, which goes next
    assert observer.steps[1][0] == repr((7, -7, 3, -3))


class Settled(tuple):
    """A toy candidate marked as settled (as the source reducer re-parses the candidates passes analyse)."""


def test_only_candidates_that_become_bases_are_settled():
    settled = []

    def settle(items):
        settled.append(items)
        return Settled(items)

    def propose(items):
        assert isinstance(items, Settled), "a pass got an unsettled base"
        return delete_one(items)

    tester = Tester(repr, lambda text, cancel: 7 in eval(text))
    result = Reducer([Pass("delete_one", propose)], tester, len, Recorder(), settle=settle).reduce((1, 7, 2, 3))
    tester.close()
    assert result == (7,) and isinstance(result, Settled)
    turned_down = {eval(text) for text, shows in tester._cache.items() if not shows}
    assert turned_down and not turned_down & {tuple(s) for s in settled}


def test_reduces_to_the_minimal_interesting_case():
    result, tester, observer, _ = reduce(range(20), lambda t: 7 in t and len(t) >= 2)
    assert result == (7, 1)
    assert tester.stats.oracle_calls > 0 and observer.steps


def test_each_pass_keeps_what_it_removed_over_all_rounds():
    # The last round of a reduction removes nothing; the report must still show what each pass removed.
    tester = Tester(repr, lambda text, cancel: 7 in eval(text))
    size = lambda t: len(t) * 1000 + sum(t)  # noqa: E731
    passes = [Pass.of(delete_one), Pass.of(halve_each)]
    start = (9, 7, 30)
    result = Reducer(passes, tester, size, Recorder()).reduce(start)
    tester.close()
    assert result == (7,)
    assert sum(p.size_removed for p in passes) == size(start) - size(result)
    assert passes[0].size_removed > 0 and passes[0].payoff == passes[0].size_removed / passes[0].tried


def test_never_evaluates_a_candidate_twice():
    _, tester, _, calls = reduce([5, 9, 3, 8, 2], lambda t: sum(t) >= 10)
    assert len(calls) == len(set(calls))
    assert tester.stats.oracle_calls == len(calls)


def test_parallel_jobs_give_the_same_result_as_sequential():
    def predicate(t):
        return 7 in t and sum(t) > 30

    sequential, *_ = reduce(range(15), predicate, jobs=1)
    parallel, *_ = reduce(range(15), predicate, jobs=4)
    assert sequential == parallel


def test_cache_hits_are_counted_for_layout_equal_candidates():
    tester = Tester(lambda t: t, lambda text, cancel: False, key=lambda text: text.replace(" ", ""))
    assert tester.consider("a b") is False
    assert tester.consider("ab") is False
    assert tester.stats.oracle_calls == 1 and tester.stats.cache_hits == 1


def test_parallel_window_cancels_what_runs_behind_the_answer():
    started, cancelled = [], []

    def evaluate(text, cancel):
        started.append(text)
        if text == "slow":
            cancel.wait(5)
            cancelled.append(cancel.is_set())
            return None
        return text == "hit"

    tester = Tester(lambda t: t, evaluate, jobs=3)
    began = time.monotonic()
    assert tester.first_interesting(["miss", "hit", "slow", "never"]) == (1, "hit")
    tester.close()
    deadline = time.monotonic() + 5
    while not cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cancelled == [True] and time.monotonic() - began < 4
    assert tester.stats.cancelled == 1
    assert "hit" in tester._cache and "slow" not in tester._cache  # an unknown answer is not cached


def test_workers_keep_taking_candidates_while_a_slow_one_runs_ahead():
    import threading

    hit_started = threading.Event()

    def evaluate(text, cancel):
        if text == "slow":
            # Only finishes early if the other worker got through every miss to the hit meanwhile.
            hit_started.wait(5)
            return False
        if text == "hit":
            hit_started.set()
        return text == "hit"

    tester = Tester(lambda t: t, evaluate, jobs=2)
    began = time.monotonic()
    assert tester.first_interesting(["slow", "m1", "m2", "m3", "hit", "after"]) == (4, "hit")
    tester.close()
    assert time.monotonic() - began < 4
    assert tester.stats.oracle_calls == 5  # nothing after the hit was started


def test_screened_out_candidates_are_never_run():
    runs = []
    tester = Tester(
        lambda t: t,
        lambda text, cancel: runs.append(text) or True,
        screen=lambda text: "has an x" if "x" in text else None,
    )
    assert tester.first_interesting(["x1", "x2", "ok"]) == (2, "ok")
    assert runs == ["ok"]
    assert tester.stats.screened_out == 2 and tester.stats.oracle_calls == 1


def test_a_screen_in_the_workers_turns_down_the_same_candidates_without_running_them():
    import threading

    runs, screened_by = [], set()

    def screen(text):
        screened_by.add(threading.current_thread().name)
        return "has an x" if "x" in text else None

    tester = Tester(lambda t: t, lambda text, cancel: runs.append(text) or text == "ok2", screen=screen, jobs=3,
                    screen_in_workers=True)  # fmt: skip
    try:
        assert tester.first_interesting(["x1", "ok1", "x2", "ok2", "x3"]) == (3, "ok2")
    finally:
        tester.close()
    assert sorted(runs) == ["ok1", "ok2"]  # x3 may be screened speculatively, never run
    assert tester.stats.screened_out >= 2 and tester.stats.oracle_calls == 2
    assert threading.main_thread().name not in screened_by


def test_an_offloaded_screen_answers_as_the_screen_does_and_counts_its_cpu():
    from minimizer.reduce.offload import OffloadedScreen
    from minimizer.source.screen import SourceScreen
    from minimizer.source.statement import StatementPlace
    from minimizer.source.viability import Viability

    start = "def f(x):\n    return x + 1\n\nprint(f(2))\n"
    screen = SourceScreen(Viability.of(start, oracle_compares_compiled_calls=False), StatementPlace("inplace"))
    offloaded = OffloadedScreen(screen, workers=1)
    try:
        for candidate in (start, "print(f(2))\n", "def f(x):\n    return x\n\nprint(f(2, 3))\n", "def f(:\n"):
            assert offloaded(candidate, start) == screen(candidate, start)
        assert offloaded(start, start) is None and offloaded("print(f(2))\n", start) is not None
    finally:
        offloaded.close()
    assert offloaded.cpu_seconds > 0


def test_speculation_runs_the_follow_on_question_while_the_head_runs():
    import threading

    from minimizer.reduce.tester import Proposal

    child_started = threading.Event()
    runs = []

    def evaluate(text, cancel):
        runs.append(text)
        if text == "head":
            # Interesting, but only answers once a spare worker has started what comes after it.
            return child_started.wait(5)
        if text == "child":
            child_started.set()
        return text == "child"

    tester = Tester(lambda t: t, evaluate, jobs=2)
    head = Proposal("head", lambda: ["child", "grandchild"])
    # The head answers True only if the child started while it ran (else it times out and answers False).
    assert tester.first_interesting([head, "sibling"], p_interesting=0.9) == (0, head)  # the item as given
    assert tester.first_interesting(["child", "grandchild"]) == (0, "child")
    tester.close()
    assert runs.count("child") == 1  # the caller's question was answered by the speculative run


def test_where_runs_start_cuda_only_likelier_questions_run_ahead():
    """A question the scheduler would run ahead at a chance of 0.2 on the CPU is left alone where each run starts
    a CUDA context (a run started and cancelled there slows the others)."""

    import threading

    from minimizer.reduce.tester import Speculation, speculation_for

    assert speculation_for("cuda (NVIDIA H100 80GB HBM3)") == Speculation(0.25, 10.0)
    assert speculation_for("cpu") == Speculation(0.1, 3.0)
    # Resident workers start no CUDA context for a run that is cancelled: as free as on the CPU.
    assert speculation_for("cuda (NVIDIA H100 80GB HBM3)", resident=True) == Speculation(0.1, 3.0)

    def asked_ahead(speculation):
        head_may_answer = threading.Event()
        runs = []

        def evaluate(text, cancel):
            runs.append(text)
            if text == "head":
                head_may_answer.wait(0.5)  # long enough for a spare worker to take the follow-on question
            return False

        tester = Tester(lambda t: t, evaluate, jobs=2, speculation=speculation)
        assert tester.first_interesting([Proposal("head", lambda: ["child"]), "sibling"], p_interesting=0.2) is None
        tester.close()
        return "child" in runs

    assert asked_ahead(speculation_for("cpu"))
    assert not asked_ahead(speculation_for("cuda (NVIDIA H100 80GB HBM3)"))


def test_one_worker_never_speculates():
    from minimizer.reduce.tester import Proposal

    def never(*_):
        raise AssertionError("asked for follow-on questions with one worker")

    tester = Tester(lambda t: t, lambda text, cancel: text == "b")
    b = Proposal("b", never)
    assert tester.first_interesting([Proposal("a", never), b, "c"], p_interesting=0.99) == (1, b)
    assert tester.stats.oracle_calls == 2


def test_speculation_on_a_branch_that_fails_is_cancelled():
    import threading

    from minimizer.reduce.tester import Proposal

    cancelled = []
    head_may_answer = threading.Event()

    def evaluate(text, cancel):
        if text == "head":
            head_may_answer.wait(5)
            return False
        if text == "child":
            head_may_answer.set()
            cancel.wait(5)  # runs until nobody needs it
            cancelled.append(cancel.is_set())
            return None
        return text == "next"

    tester = Tester(lambda t: t, evaluate, jobs=2)
    head = Proposal("head", lambda: ["child"])
    assert tester.first_interesting([head, "next"], p_interesting=0.9) == (1, "next")
    tester.close()
    deadline = time.monotonic() + 5
    while not cancelled and time.monotonic() < deadline:
        time.sleep(0.01)
    assert cancelled == [True]


# Speculation never changes the reduction: the same steps for any number of workers, whatever the timing.


def delete_chunks(items: tuple):
    for size in (4, 2, 1):
        for start in range(0, len(items), size):
            yield items[:start] + items[start + size :]


def decrement_each(items: tuple):
    for i, value in enumerate(items):
        if value > 0:
            yield items[:i] + (value - 1,) + items[i + 1 :]


def reduce_with_jitter(items, needed, jobs, seed):
    jitter = random.Random(seed)
    delays = {}

    def evaluate(text, cancel):
        time.sleep(delays.setdefault(text, jitter.random() * 0.002))
        case = eval(text)
        return all(n in case for n in needed) and sum(x for x in case if x > 0) >= len(needed)

    tester = Tester(repr, evaluate, jobs=jobs)
    observer = Recorder()
    passes = [Pass.of(delete_chunks), Pass.of(decrement_each)]
    reducer = Reducer(passes, tester, lambda t: len(t) * 100 + sum(map(abs, t)), observer, follow_up=drop_orphans)
    try:
        return reducer.reduce(tuple(items)), observer.steps
    finally:
        tester.close()


@settings(max_examples=25, deadline=None)
@given(
    items=st.lists(st.integers(-4, 6), min_size=1, max_size=10),
    jobs=st.sampled_from([2, 3, 8]),
    seed=st.integers(0, 1000),
)
def test_any_number_of_workers_takes_the_same_steps(items, jobs, seed):
    needed = [x for x in items if x > 0][:2]
    assert reduce_with_jitter(items, needed, 1, seed) == reduce_with_jitter(items, needed, jobs, seed)


def test_speculation_follows_what_the_same_cut_answered_on_an_earlier_base():
    """A cut that showed the bug on one base likely shows it on the next: the spare worker goes on from it (its
    follow-on question) rather than to the question after it, which it would take on an even chance."""

    import threading

    started, second = [], threading.Event()

    def evaluate(text, cancel):
        started.append(text)
        if text == "a\nd\n":
            second.wait(5)  # holds one worker until the other has taken its next question
        else:
            second.set()
        return text in ("a\nb\n", "a\nd\n")

    tester = Tester(lambda t: t, evaluate, jobs=2)
    try:
        assert tester.first_interesting([Proposal("a\nb\n", base="a\nb\nc\n")])[0] == 0  # cut c: shows the bug
        later = "a\nc\nd\n"
        cut_c_again = Proposal("a\nd\n", lambda: [Proposal("a\n", base="a\nd\n")], base=later)
        assert tester.first_interesting([cut_c_again, Proposal("a\nc\n", base=later)])[0] == 0
        assert started[1:3] == ["a\nd\n", "a\n"]
    finally:
        tester.close()


def test_a_pass_taken_again_and_again_is_asked_for_several_proposals_at_once(monkeypatch):
    """After two of a pass's questions are taken in a row, the next one applies its next two proposals at once, then
    four: the same result in fewer steps and fewer questions than one proposal a question."""

    import minimizer.reduce.scheduler as scheduler

    def run():
        tester = Tester(repr, lambda text, cancel: 7 in eval(text))
        observer = Recorder()
        result = Reducer([Pass.of(delete_one)], tester, len, observer).reduce(tuple(range(1, 41)))
        tester.close()
        return result, len(observer.steps), tester.stats.oracle_calls

    batched = run()
    monkeypatch.setattr(scheduler, "BATCH_AFTER_STREAK", 10**9)
    one_at_a_time = run()
    assert batched[0] == one_at_a_time[0] == (7,)
    assert one_at_a_time[1] == 39 and batched[1] < 20
    assert batched[2] < one_at_a_time[2]


def test_a_groups_questions_are_predicted_by_the_answer_its_question_before_got():
    """Cuts come in runs: after a question of a group was taken, the next of that group is likelier to be taken than
    after one was turned down, and speculation follows the rate that matches the path."""

    shows = {"y1", "y2", "y3", "y4", "y5"}
    tester = Tester(lambda text: text, lambda text, cancel: text in shows)
    try:
        for taken in ("y1", "y2", "y3", "y4"):
            assert tester.first_interesting([Proposal(taken, group="g")]) is not None
        assert tester.first_interesting([Proposal(text, group="g") for text in ("n1", "n2", "n3", "y5")])[0] == 3
        rate = tester._group_chance("g", None, 0.5)
        assert tester._group_chance("g", True, 0.5) > rate > tester._group_chance("g", False, 0.5)
    finally:
        tester.close()


def test_the_time_is_up_while_runs_outlast_it():
    # Runs started before the deadline may take far longer (a candidate slowed by a loaded machine): the
    # reduction stops at its deadline, not when they end.
    from minimizer.reduce.scheduler import OutOfTime

    def evaluate(text, cancel):
        cancel.wait(20)
        return False

    tester = Tester(repr, evaluate, jobs=2)
    reducer = Reducer([Pass.of(delete_one)], tester, len, Events(), deadline=time.monotonic() + 0.5)
    began = time.monotonic()
    try:
        reducer.reduce((1, 2, 3))
        raise AssertionError("no OutOfTime")
    except OutOfTime:
        pass
    finally:
        tester.close()
    assert time.monotonic() - began < 5
