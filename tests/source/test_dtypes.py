"""Tests for `simplify_dtypes`."""

from __future__ import annotations


import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.values.dtypes import simplify_dtypes
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce

def candidate_codes(code: str) -> list[str]:
    return [candidate.code for candidate in simplify_dtypes(cst.parse_module(code))]


def test_all_edits_at_once_come_first_then_each_alone():
    codes = candidate_codes("x = torch.randn(2, dtype=torch.float16).double()\n")
    assert codes == [
        "x = torch.randn(2)\n",
        "x = torch.randn(2, dtype=torch.float16)\n",
        "x = torch.randn(2).double()\n",
        "x = torch.randn(2, dtype=torch.float32).double()\n",
    ]


def test_low_and_high_precision_become_float32():
    for dtype in ["float64", "double", "float16", "half", "bfloat16"]:
        assert candidate_codes(f"t = torch.{dtype}\n") == ["t = torch.float32\n"]


def test_float32_and_integer_dtypes_stay():
    assert candidate_codes("a = torch.float32\nb = torch.long\n") == []


def test_casts_are_removed():
    for cast in [".double()", ".half()", ".bfloat16()", ".float()", ".to(torch.half)", ".to(dtype=torch.long)"]:
        codes = candidate_codes(f"y = (a + b){cast}\n")
        assert codes[0] == "y = (a + b)\n"


def test_device_moves_stay():
    assert candidate_codes("y = x.to('cuda').to(device)\n") == []
    assert candidate_codes("y = x.to(device, torch.half)\n") == ["y = x.to(device, torch.float32)\n"]


def test_to_with_dtype_keyword_is_removed_as_one_cast():
    # Dropping only the keyword would give `x.to()`, the same program as dropping the cast.
    assert candidate_codes("y = x.to(dtype=torch.float64)\n") == ["y = x\n", "y = x.to(dtype=torch.float32)\n"]


def test_nested_casts_compose_when_all_edits_are_made():
    assert candidate_codes("y = x.to(torch.bfloat16).double().half()\n")[0] == "y = x\n"


def test_greedy_keeps_only_what_the_bug_needs():
    snippet = (
        "x = torch.randn(4, dtype=torch.float64)\n"
        "y = x.half().to(torch.bfloat16)\n"
        "z = y.float() + torch.ones(4, dtype=torch.double)\n"
    )
    reduced = greedy_reduce(snippet, simplify_dtypes, lambda code: ".half()" in code)
    assert reduced == "x = torch.randn(4)\ny = x.half()\nz = y + torch.ones(4)\n"


_names = st.sampled_from(["x", "y", "a"])
_dtypes = st.sampled_from(["float64", "double", "float16", "half", "bfloat16", "float32", "long", "int8", "bool"])
_casts = st.sampled_from([".double()", ".half()", ".bfloat16()", ".float()", ".cuda()", ".to(device)"])
_statements = st.one_of(
    st.builds("{} = torch.randn(2, dtype=torch.{})".format, _names, _dtypes),
    st.builds("{} = {}{}{}".format, _names, _names, _casts, _casts),
    st.builds("{} = {}.to(torch.{}){}".format, _names, _names, _dtypes, _casts),
    st.builds("{} = ({} + {}).to(dtype=torch.{})".format, _names, _names, _names, _dtypes),
    st.builds("{} = f({}, torch.{}, dtype=torch.{})".format, _names, _names, _dtypes, _dtypes),
    st.builds("if {}:\n    {} = {}.to({}, torch.{})".format, _names, _names, _names, _names, _dtypes),
)
_programs = st.lists(_statements, min_size=1, max_size=6).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=30, deadline=None)
@given(_programs)
def test_candidates_parse_differ_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, simplify_dtypes, limit=20)
