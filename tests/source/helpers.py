"""Shared test helpers for the source passes: a greedy reduction loop and a strategy for small scripts."""

from __future__ import annotations

import itertools
from typing import Callable, Iterable, Iterator

import libcst as cst
from hypothesis import strategies as st

from minimizer.source.passes.candidates import compiles
from minimizer.source.rendering import code_size

Pass = Callable[[cst.Module], Iterator[cst.Module]]


def greedy_reduce(code: str, reduction_pass: Pass, interesting: Callable[[str], bool], max_steps: int = 200) -> str:
    """Run one pass to a fixpoint the way `minimizer.reduce.scheduler.Reducer` does.

    Within a run of the pass (`Reducer._run_pass`): keep the first interesting candidate, call the pass again on it
    and skip as many candidates as the accepted one's index; the run ends when the candidates from the skip index on
    hold nothing interesting. Like the scheduler, candidates that grow or were already accepted once are left out
    before counting. Runs (the scheduler's rounds, here of a single pass) repeat from index 0 until one changes
    nothing. `max_steps` bounds the number of accepted candidates.
    """
    module = cst.parse_module(code)
    assert interesting(module.code), "the starting snippet must be interesting"
    visited = {module.code}
    steps = 0
    while True:
        before = module.code
        skip = 0
        while True:
            found = _first_interesting(itertools.islice(_fresh(reduction_pass, module, visited), skip, None), interesting)
            if found is None:
                break
            offset, module = found
            skip += offset
            visited.add(module.code)
            steps += 1
            if steps > max_steps:
                raise AssertionError("the greedy loop did not converge")
        if module.code == before:
            return module.code


def _fresh(reduction_pass: Pass, module: cst.Module, visited: set[str]) -> Iterator[cst.Module]:
    """The pass's candidates minus ones that grew or were already accepted (the scheduler's `_fresh`)."""
    limit = code_size(module)
    for candidate in reduction_pass(module):
        if code_size(candidate) <= limit and candidate.code not in visited:
            yield candidate


def _first_interesting(candidates: Iterable[cst.Module], interesting: Callable[[str], bool]):
    for index, candidate in enumerate(candidates):
        if interesting(candidate.code):
            return index, candidate
    return None


def runs_and(check: Callable[[dict], bool]) -> Callable[[str], bool]:
    """An in-process oracle: the code runs without raising and `check(namespace)` holds afterwards."""

    def interesting(code: str) -> bool:
        namespace: dict = {}
        try:
            exec(compile(code, "<snippet>", "exec"), namespace)
            return bool(check(namespace))
        except Exception:
            return False

    return interesting


def runs_and_computes(name: str, value) -> Callable[[str], bool]:
    """An in-process oracle: the code runs and leaves `name == value` in its namespace."""
    return runs_and(lambda namespace: namespace.get(name) == value)


def check_candidates_are_valid_and_not_larger(code: str, reduction_pass: Pass, limit: int = 40) -> None:
    """The pass invariants: every candidate compiles, round-trips through libcst, differs from the input and from
    every earlier candidate, and has no more tokens."""
    module = cst.parse_module(code)
    size = code_size(code)
    seen = {code}
    for candidate in itertools.islice(reduction_pass(module), limit):
        candidate_code = candidate.code
        assert candidate_code not in seen, candidate_code
        seen.add(candidate_code)
        assert code_size(candidate_code) <= size, candidate_code
        assert compiles(candidate_code), candidate_code
        assert cst.parse_module(candidate_code).code == candidate_code


_SIMPLE_STATEMENTS = [
    "x = torch.relu(y)",
    "y = a + b * c",
    "z = f(x, k=1, j=2)",
    "import os",
    "import torch.nn as nn",
    "from m import a, b",
    "print(x.view(2, 3))",
    "self.w = nn.Linear(4, 4)",
    "self.s = nn.Sequential(nn.ReLU(), nn.Tanh())",
    "x = self.w(x)",
    "h = self.s(x) + self.w(x)",
    "a, b = b, a",
    "t = (x - 1, y)",
    "pass",
    "c += 1",
    "q = [g(i) for i in range(3)]",
    '"""docstring"""',
    "m = torch.compile(model, backend='inductor')",
    "assert x is not None",
]
_COMPOUND_HEADERS = [
    "def f(x, y=2):",
    "def __init__(self):",
    "def forward(self, x):",
    "class C(nn.Module):",
    "if x:",
    "for i in range(3):",
    "with ctx():",
]


def _block(depth: int) -> st.SearchStrategy[list[str]]:
    simple = st.sampled_from(_SIMPLE_STATEMENTS).map(lambda line: [line])
    if depth >= 2:
        statement = simple
    else:
        compound = st.tuples(st.sampled_from(_COMPOUND_HEADERS), _block(depth + 1)).map(
            lambda pair: [pair[0], *("    " + line for line in pair[1])]
        )
        statement = st.one_of(simple, compound)
    return st.lists(statement, min_size=1, max_size=4).map(lambda lines: [line for s in lines for line in s])


snippets = _block(0).map(lambda lines: "\n".join(lines) + "\n")
"""Small, syntactically valid scripts mixing imports, defs, classes, layers, calls and operators."""

_INIT_LINES = [
    "super().__init__()",
    "self.w = nn.Linear(4, 4)",
    "self.s = nn.Sequential(nn.ReLU(), nn.Tanh())",
    "self.n = Norm(4, eps=1e-5)",
    "self.k = 3",
]
_FORWARD_LINES = [
    "x = self.w(x)",
    "h = self.s(x) + self.w(x)",
    "x = self.n(self.w(x))",
    "y = self.k * x",
    "x = self.w.weight @ x",
    "return self.s(x)",
]


def _lines(pool: list[str]) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(pool), min_size=1, max_size=4)


module_classes = st.tuples(_lines(_INIT_LINES), _lines(_FORWARD_LINES)).map(
    lambda parts: "class M(nn.Module):\n    def __init__(self):\n"
    + "".join(f"        {line}\n" for line in parts[0])
    + "    def forward(self, x):\n"
    + "".join(f"        {line}\n" for line in parts[1])
    + "m = M()\nprint(m(x))\n"
)
"""`nn.Module`-like classes with layers set in `__init__` and used in `forward`."""
