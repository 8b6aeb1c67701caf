import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.expressions.subscripts import shrink_subscripts
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and_computes, snippets


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in shrink_subscripts(cst.parse_module(code))]


def test_index_elements_are_dropped_last_first():
    assert candidates("S[0, 1] = v\n") == ["S[0] = v\n", "S[1] = v\n"]
    assert candidates("y = x[:, 0, 2]\n")[:3] == ["y = x[:, 0]\n", "y = x[:, 2]\n", "y = x[0, 2]\n"]


def test_slices_lose_step_then_upper_then_lower_bound():
    assert candidates("y = x[1:5:2]\n") == ["y = x[1:5]\n", "y = x[1::2]\n", "y = x[:5:2]\n", "y = x\n"]
    assert candidates("y = x[1:5]\n") == ["y = x[1:]\n", "y = x[:5]\n", "y = x\n"]


def test_a_read_subscript_becomes_its_value_last_a_stored_one_never():
    assert candidates("y = x[3]\n") == ["y = x\n"]
    assert candidates("y = compiled[finite]\n") == ["y = compiled\n"]
    assert candidates("x[3] = y\n") == []
    assert candidates("x[3] += y\n") == []


def test_outer_subscripts_first_and_annotations_skipped():
    assert candidates("y = x[a, b][c:d]\n") == [
        "y = x[a, b][c:]\n", "y = x[a, b][:d]\n", "y = x[a, b]\n", "y = x[a][c:d]\n", "y = x[b][c:d]\n", "y = x[c:d]\n"
    ]
    assert candidates("def f(a: Dict[str, int]):\n    pass\n") == []


_SUBSCRIPTS = st.lists(
    st.sampled_from(["S[0, 1] = v[2]", "y = x[:, 0, 2]", "y = x[1:5:2][a]", "z = x[::2, -1:]", "w = d['k']"]),
    min_size=1,
    max_size=4,
).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, _SUBSCRIPTS))
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, shrink_subscripts)


def test_greedy_loop_keeps_only_the_needed_index():
    code = "grid = [[1, 2], [3, 4]]\nrow = grid[1][0:2:1]\nresult = row[1:2][0]\n"
    reduced = greedy_reduce(code, shrink_subscripts, runs_and_computes("result", 4))
    assert reduced == "grid = [[1, 2], [3, 4]]\nrow = grid[1]\nresult = row[1:][0]\n"


def test_a_whole_slice_is_its_value():
    found = [c.code for c in shrink_subscripts(cst.parse_module("y = f(x[:], z[:, :])\n"))]
    assert found == ["y = f(x, z[:, :])\n", "y = f(x[:], z)\n"]


def test_a_dict_display_read_at_a_literal_key_is_the_value_there():
    assert candidates('v = {"max_abs": e, "mean": m}["max_abs"]\n')[0] == "v = e\n"
    assert "v = e\n" not in candidates('v = {"max_abs": e}[key]\n')
