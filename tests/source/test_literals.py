"""Tests for `shrink_int_literals` and `shrink_shapes`."""

from __future__ import annotations

import itertools

import libcst as cst
import libcst.matchers as m
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.values.literals import shrink_int_literals, shrink_shapes
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce

def candidate_codes(reduction_pass, code: str) -> list[str]:
    return [candidate.code for candidate in reduction_pass(cst.parse_module(code))]


# --- shrink_int_literals -------------------------------------------------------------------------------------------


def test_equal_values_shrink_together_first():
    codes = candidate_codes(shrink_int_literals, "lin = nn.Linear(64, 64)\nx = torch.randn(8, 64)\n")
    assert codes[0] == "lin = nn.Linear(1, 1)\nx = torch.randn(8, 1)\n"
    assert codes[1] == "lin = nn.Linear(2, 2)\nx = torch.randn(8, 2)\n"
    assert codes[2] == "lin = nn.Linear(32, 32)\nx = torch.randn(8, 32)\n"
    # Never to 0: an empty tensor is a degenerate repro.
    assert "nn.Linear(0, 0)" not in "".join(codes)


def test_larger_values_come_first_then_single_occurrences():
    codes = candidate_codes(shrink_int_literals, "f(64, 64, 8)\n")
    assert codes == [
        "f(1, 1, 8)\n", "f(2, 2, 8)\n", "f(32, 32, 8)\n",
        "f(64, 64, 1)\n", "f(64, 64, 2)\n", "f(64, 64, 4)\n",
        "f(1, 64, 8)\n", "f(32, 64, 8)\n", "f(64, 1, 8)\n", "f(64, 32, 8)\n",
    ]


def test_negative_literals_and_zero_are_left_alone():
    assert candidate_codes(shrink_int_literals, "x.view(-1, 0)\n") == []


def test_one_is_as_small_as_a_literal_gets():
    assert candidate_codes(shrink_int_literals, "f(1)\n") == []


def test_greedy_int_shrinking_keeps_shapes_consistent():
    snippet = (
        "class Linear:\n"
        "    def __init__(self, i, o):\n"
        "        self.i, self.o = i, o\n"
        "    def __call__(self, shape):\n"
        "        assert shape[-1] == self.i\n"
        "        return shape[:-1] + (self.o,)\n"
        "lin = Linear(64, 64)\n"
        "out = lin((8, 64))\n"
    )

    def interesting(code: str) -> bool:
        namespace: dict = {}
        try:
            exec(code, namespace)
        except AssertionError:
            return False
        return namespace["out"][0] >= 3

    reduced = greedy_reduce(snippet, shrink_int_literals, interesting)
    assert reduced.endswith("lin = Linear(1, 1)\nout = lin((4, 1))\n")


# --- shrink_shapes -------------------------------------------------------------------------------------------------


def test_factory_call_loses_leading_dimensions_first():
    codes = candidate_codes(shrink_shapes, "x = torch.randn(2, 3, 4)\n")
    assert codes == [
        "x = torch.randn(4)\n",
        "x = torch.randn(3, 4)\n",
        "x = torch.randn(2, 4)\n",
        "x = torch.randn(2, 3)\n",
    ]


def test_identical_shapes_shrink_together_first():
    codes = candidate_codes(shrink_shapes, "x = torch.randn(2, 3)\ny = torch.zeros((2, 3))\n")
    assert codes[0] == "x = torch.randn(3)\ny = torch.zeros((3,))\n"
    assert "x = torch.randn(2, 3)\ny = torch.zeros((3,))\n" in codes


def test_view_reshape_and_name_dimensions():
    codes = candidate_codes(shrink_shapes, "y = x.view(a, -1)\nz = x.reshape([a, b, c])\n")
    assert "y = x.view(-1)\nz = x.reshape([a, b, c])\n" in codes
    assert "y = x.view(a, -1)\nz = x.reshape([c])\n" in codes


def test_randint_bounds_are_not_a_shape():
    codes = candidate_codes(shrink_shapes, "t = torch.randint(0, 10, (5, 6))\n")
    assert codes == ["t = torch.randint(0, 10, (6,))\n", "t = torch.randint(0, 10, (5,))\n"]


def test_tuples_of_names_outside_shape_calls_are_not_shapes():
    assert candidate_codes(shrink_shapes, "return_value = (a, b)\nf(x, y)\n") == []


def test_greedy_shape_shrinking():
    snippet = "x = randn(2, 3, 4)\ny = zeros((2, 3, 4))\n"
    prelude = "def randn(*dims):\n    return dims\ndef zeros(dims):\n    return tuple(dims)\n"

    def interesting(code: str) -> bool:
        namespace: dict = {}
        exec(prelude + code, namespace)
        return namespace["x"] == namespace["y"] and 4 in namespace["x"]

    assert greedy_reduce(snippet, shrink_shapes, interesting) == "x = randn(4)\ny = zeros((4,))\n"


# --- properties ----------------------------------------------------------------------------------------------------

_names = st.sampled_from(["x", "y", "a", "b"])
_ints = st.integers(min_value=0, max_value=128).map(str) | st.sampled_from(["-1", "0x10", "1_000"])
_dims = st.lists(_ints | _names, min_size=1, max_size=4).map(", ".join)
_statements = st.one_of(
    st.builds("{} = torch.randn({})".format, _names, _dims),
    st.builds("{} = nn.Linear({}, {})".format, _names, _ints, _ints),
    st.builds("{} = {}.view({})".format, _names, _names, _dims),
    st.builds("{} = torch.zeros(({},), dtype=torch.float16)".format, _names, _dims),
    st.builds("{} = torch.randint({}, {}, [{}])".format, _names, _ints, _ints, _dims),
    st.builds("for i in range({}):\n    {} = {}[{}] + i".format, _ints, _names, _names, _ints),
    st.builds("{} = [{}]".format, _names, _dims),
)
_programs = st.lists(_statements, min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


def literal_sum(code: str) -> int:
    return sum(node.evaluated_value for node in m.findall(cst.parse_module(code), m.Integer()))


@settings(max_examples=30, deadline=None)
@given(_programs)
def test_int_candidates_parse_never_grow_and_only_lower_literals(code):
    check_candidates_are_valid_and_not_larger(code, shrink_int_literals, limit=20)
    before = literal_sum(code)
    for candidate in itertools.islice(shrink_int_literals(cst.parse_module(code)), 20):
        assert literal_sum(candidate.code) < before


@settings(max_examples=30, deadline=None)
@given(_programs)
def test_shape_candidates_parse_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, shrink_shapes, limit=20)
