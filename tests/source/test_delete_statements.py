import libcst as cst
from hypothesis import given, settings

from minimizer.source.passes.statements.delete_statements import delete_statements
from tests.source.helpers import (
    check_candidates_are_valid_and_not_larger,
    greedy_reduce,
    runs_and_computes,
    snippets,
)


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in delete_statements(cst.parse_module(code))]


def test_halves_come_before_single_statements():
    found = candidates("a = 1\nb = 2\nc = 3\nd = 4\n")
    assert found[:2] == ["c = 3\nd = 4\n", "a = 1\nb = 2\n"]
    assert "a = 1\nb = 2\nc = 3\n" in found
    assert found.index("c = 3\nd = 4\n") < found.index("b = 2\nc = 3\nd = 4\n")


def test_top_level_before_class_before_function_bodies_at_each_granularity():
    code = "class C:\n    u = 1\n    v = 2\ndef f():\n    x = 1\n    return x\ny = 3\nz = 4\n"
    found = candidates(code)
    first_class_edit = found.index("class C:\n    v = 2\ndef f():\n    x = 1\n    return x\ny = 3\nz = 4\n")
    first_function_edit = found.index("class C:\n    u = 1\n    v = 2\ndef f():\n    return x\ny = 3\nz = 4\n")
    first_top_level_edit = found.index("y = 3\nz = 4\n")
    assert first_top_level_edit < first_class_edit < first_function_edit


def test_emptied_body_gets_pass():
    assert "def f():\n    pass\nf()\n" in candidates("def f():\n    x = 1\nf()\n")


def test_nested_blocks_are_reduced():
    found = candidates("for i in range(2):\n    if i:\n        a = 1\n        b = 2\n")
    assert "for i in range(2):\n    if i:\n        b = 2\n" in found


def test_never_yields_the_input():
    assert candidates("pass\n") == []


@settings(max_examples=25, deadline=None)
@given(snippets)
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, delete_statements)


def test_greedy_loop_reaches_the_core():
    code = """\
import math
a = 1
b = 2
def f(x):
    y = x + 1
    z = y * 2
    return x * 3
class Unused:
    k = 1
    def g(self):
        return 1
c = f(a)
d = b + 1
result = c
"""
    reduced = greedy_reduce(code, delete_statements, runs_and_computes("result", 3))
    assert reduced == "a = 1\ndef f(x):\n    return x * 3\nc = f(a)\nresult = c\n"
