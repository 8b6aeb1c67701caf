"""Speculation never changes the reduction: the same steps for any number of workers, whatever the timing."""

import random
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.reduce.scheduler import Pass, Reducer
from minimizer.reduce.tester import Tester


class Steps:
    def __init__(self):
        self.steps = []

    def reduction_started(self, size):
        pass

    def pass_started(self, name):
        pass

    def accepted(self, text, size, pass_name):
        self.steps.append((text, pass_name))


def delete_chunks(items: tuple):
    for size in (4, 2, 1):
        for start in range(0, len(items), size):
            yield items[:start] + items[start + size :]


def decrement_each(items: tuple):
    for i, value in enumerate(items):
        if value > 0:
            yield items[:i] + (value - 1,) + items[i + 1 :]


def drop_orphans(before, after):
    # A negative item is the "definition" of its positive twin: once the twin is gone, try dropping it too.
    orphans = [x for x in after if x < 0 and -x not in after]
    return tuple(x for x in after if x not in orphans) if orphans else None


def reduce(items, needed, jobs, seed):
    jitter = random.Random(seed)
    delays = {}

    def evaluate(text, cancel):
        time.sleep(delays.setdefault(text, jitter.random() * 0.002))
        case = eval(text)
        return all(n in case for n in needed) and sum(x for x in case if x > 0) >= len(needed)

    tester = Tester(repr, evaluate, jobs=jobs)
    observer = Steps()
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
    assert reduce(items, needed, 1, seed) == reduce(items, needed, jobs, seed)
