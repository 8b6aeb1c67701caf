"""Tests for `inline_single_use_variables`."""

from __future__ import annotations

import itertools

import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.names.inline import inline_single_use_variables
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce

def candidate_codes(code: str) -> list[str]:
    return [candidate.code for candidate in inline_single_use_variables(cst.parse_module(code))]


def test_single_use_is_inlined():
    assert candidate_codes("x = torch.randn(2)\ny = model(x)\n") == ["y = model(torch.randn(2))\n"]


def test_inlining_into_a_rebinding_of_the_same_name():
    code = "def f():\n    x = torch.randn(2)\n    x = x.relu()\n    return x\n"
    assert candidate_codes(code) == [
        "def f():\n    x = torch.randn(2).relu()\n    return x\n",
        "def f():\n    x = torch.randn(2)\n    return x.relu()\n",
    ]


def test_operands_get_parentheses_where_precedence_needs_them():
    assert candidate_codes("b = a + 1\nc = b * 2\n") == ["c = (a + 1) * 2\n"]
    assert candidate_codes("k = -3\nprint(k ** 2)\n") == ["print((-3) ** 2)\n"]
    assert candidate_codes("b = a + 1\nc = b.relu()\n") == ["c = (a + 1).relu()\n"]
    assert candidate_codes("n = 3\nc = n.bit_length()\n") == ["c = (3).bit_length()\n"]
    assert candidate_codes("t = 1, 2\nf(t, 3)\n") == ["f((1, 2), 3)\n"]
    assert candidate_codes("b = a < 1\nc = b < 2\n") == ["c = (a < 1) < 2\n"]
    assert candidate_codes("b = a - 1\nc = 2 - b\n") == ["c = 2 - (a - 1)\n"]
    assert candidate_codes("b = a ** 2\nc = 3 ** b\n") == ["c = 3 ** a ** 2\n"]
    assert candidate_codes("b = a ** 2\nc = b ** 3\n") == ["c = (a ** 2) ** 3\n"]
    assert candidate_codes("b = lambda: 1\nc = b()\n") == ["c = (lambda: 1)()\n"]


def test_tighter_or_left_associated_operands_need_no_parentheses():
    assert candidate_codes("b = a * 2\nc = b + 1\n") == ["c = a * 2 + 1\n"]
    assert candidate_codes("b = a - 1\nc = b - 2\n") == ["c = a - 1 - 2\n"]
    assert candidate_codes("b = a and c\nd = b or e\n") == ["d = a and c or e\n"]
    assert candidate_codes("b = -a\nc = -b\n") == ["c = --a\n"]


def test_whole_expression_slots_need_no_parentheses():
    assert candidate_codes("b = a + 1\nf(b, k=2)\n") == ["f(a + 1, k=2)\n"]
    assert candidate_codes("def g(a):\n    b = a if a else 0\n    return b\n") == ["def g(a):\n    return a if a else 0\n"]


def test_names_read_twice_are_kept():
    assert candidate_codes("x = f()\ny = x + x\n") == []


def test_reads_in_loops_lambdas_comprehensions_and_closures_are_kept():
    assert candidate_codes("x = f()\nfor i in range(3):\n    g(x)\n") == []
    assert candidate_codes("x = f()\nh = lambda: x\n") == []
    assert candidate_codes("x = f()\ny = [x for i in range(3)]\n") == []
    assert candidate_codes("x = f()\ndef g():\n    return x\n") == []
    assert candidate_codes("x = f()\nwhile x:\n    pass\n") == []


def test_read_in_a_loop_header_runs_once():
    assert candidate_codes("n = f()\nfor i in range(n):\n    pass\n") == ["for i in range(f()):\n    pass\n"]


def test_assignment_inside_a_loop_body_with_an_earlier_read_is_kept():
    code = "x = 0\nfor i in r:\n    g(x)\n    x = f(i)\n    h(x)\n"
    assert "for i in r:\n    g(x)\n    h(f(i))\n" not in "".join(candidate_codes(code))


def test_conditional_rebinding_blocks_inlining():
    assert candidate_codes("x = f()\nif c:\n    x = g()\nh(x)\n") == []


def test_read_after_an_enclosing_block_is_kept():
    assert candidate_codes("if c:\n    x = f()\nh(x)\n") == []


def test_operand_rebound_before_the_read_blocks_inlining():
    assert candidate_codes("y = a + 1\na = 5\nprint(y)\n") == []
    assert candidate_codes("h = f(x)\ny = (x := 2) + g(h)\n") == []


def test_operand_rebound_by_the_reading_assignment_itself_is_fine():
    assert candidate_codes("h = f(x)\nx = x + g(h)\n") == ["x = x + g(f(x))\n"]


def test_binding_from_another_scope_blocks_inlining():
    assert candidate_codes("v = 1\ndef f():\n    global v\n    v = 2\nf()\nprint(v)\n") == []


def test_only_binding_of_a_local_is_kept_when_read_before():
    # Removing `b = x + b` would make the earlier-unbound local `b` read the global instead.
    assert candidate_codes("def h(x):\n    b = x + b\n    return b\n") == []


def test_greedy_inlining_leaves_one_expression():
    snippet = "def f(a):\n    b = a + 1\n    c = b * 2\n    d = c - 3\n    return d\nresult = f(3)\n"

    def interesting(code: str) -> bool:
        namespace: dict = {}
        exec(code, namespace)
        return namespace["result"] == 5

    assert greedy_reduce(snippet, inline_single_use_variables, interesting) == "def f(a):\n    return (a + 1) * 2 - 3\nresult = f(3)\n"


_names = st.sampled_from(["x", "y", "a", "b"])
_expressions = st.one_of(
    st.builds("{} + {}".format, _names, _names),
    st.builds("-{}".format, _names),
    st.builds("{}.relu()".format, _names),
    st.builds("{} if {} else {}".format, _names, _names, _names),
    st.builds("f({}, {})".format, _names, _names),
    st.builds("{}, {}".format, _names, _names),
    st.builds("lambda: {}".format, _names),
    st.builds("not {}".format, _names),
    st.builds("{} < {}".format, _names, _names),
    st.sampled_from(["1", "2.5", "'s'", "[1, 2]"]),
)
_simple = st.builds("{} = {}".format, _names, _expressions) | st.builds("g({} ** 2, {})".format, _names, _expressions)
_statements = st.one_of(
    _simple,
    _simple,
    st.builds("{}.attr = {}[{}]".format, _names, _names, _names),
    st.builds("if {}:\n    {}".format, _names, _simple),
    st.builds("for i in {}:\n    {}".format, _names, _simple),
    st.builds("def h({}):\n    {}\n    return {}".format, _names, _simple, _names),
)
_programs = st.lists(_statements, min_size=1, max_size=7).map(lambda lines: "\n".join(lines) + "\n")


@settings(max_examples=40, deadline=None)
@given(_programs)
def test_candidates_parse_differ_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, inline_single_use_variables, limit=20)


_pure_expressions = st.one_of(
    st.builds("{} + {}".format, _names, _names),
    st.builds("-{} * 3".format, _names),
    st.builds("{} if {} > 2 else {}".format, _names, _names, _names),
    st.builds("{} - {} ** 2".format, _names, _names),
    st.builds("({}, {})[0]".format, _names, _names),
    st.builds("(lambda: {})()".format, _names),
)
_pure_simple = st.builds("{} = {}".format, _names, _pure_expressions)
_pure_statements = st.one_of(
    _pure_simple,
    _pure_simple,
    st.builds("if {} > 3:\n    {}".format, _names, _pure_simple),
    st.builds("for i in range(2):\n    {}\n    {}".format, _pure_simple, _pure_simple),
    # `h` reads no globals: inlining moves a call later, past statements that may rebind what it reads.
    st.builds("def h({0}):\n    {1} = {0} * 2 - {0}\n    return {1}\n{2} = h({3})".format, _names, _names, _names, _names),
)
_pure_programs = st.lists(_pure_statements, min_size=1, max_size=7).map(
    lambda lines: "a, b, x, y = 1, 2, 3, 4\n" + "\n".join(lines) + "\nout = (a, b, x, y)\n"
)


def outcome(code: str):
    namespace: dict = {}
    try:
        exec(code, namespace)
    except Exception as error:  # the programs are arbitrary, so errors are part of their behaviour
        return type(error)
    return namespace["out"]


@settings(max_examples=40, deadline=None)
@given(_pure_programs)
def test_inlining_preserves_the_behaviour_of_pure_programs(code):
    expected = outcome(code)
    for candidate in itertools.islice(inline_single_use_variables(cst.parse_module(code)), 20):
        assert outcome(candidate.code) == expected, candidate.code


def test_a_name_bound_to_a_literal_is_replaced_at_every_read():
    assert candidate_codes("eps = 0.0\ny = f(x + eps, eps)\n") == ["y = f(x + 0.0, 0.0)\n"]
    assert candidate_codes("n = -2\nfor i in range(3):\n    g(n)\n") == ["for i in range(3):\n    g(-2)\n"]
    # Reads that see another binding keep reading the name.
    assert candidate_codes("n = 1\ng(n)\nn = f()\nh(n)\n") == ["g(1)\nn = f()\nh(n)\n", "n = 1\ng(n)\nh(f())\n"]


def test_a_module_constant_is_replaced_in_the_functions_that_read_it():
    code = "WIDTH = 4\n\n\ndef f(x):\n    return x[:WIDTH]\n\n\ny = f(z) + WIDTH\n"
    assert any(c.endswith("def f(x):\n    return x[:4]\n\n\ny = f(z) + 4\n") for c in candidate_codes(code))
    # Another binding anywhere (a function's `global`, a later assignment) keeps the name.
    rebound = code + "\n\ndef g():\n    global WIDTH\n    WIDTH = 8\n"
    assert all("x[:4]" not in c for c in candidate_codes(rebound))
    assert all("x[:4]" not in c for c in candidate_codes(code + "WIDTH = 8\n"))


def test_only_names_bound_to_literals_are_inlined_where_lines_must_stay():
    from minimizer.source.passes.names.inline import inline_literal_names

    code = "def k(x_ptr):\n    row = 0\n    out = x + res\n    tl.store(x_ptr + row * 2, out)\n"
    (candidate,) = [c.code for c in inline_literal_names(cst.parse_module(code))]
    assert candidate == "def k(x_ptr):\n    out = x + res\n    tl.store(x_ptr + 0 * 2, out)\n"  # `out = x + res` stays


def test_a_kernel_inlines_its_temporaries_and_keeps_the_steps_of_a_name_bound_again():
    from minimizer.source.passes.names.inline import inline_kernel_temporaries

    code = (
        "@triton.jit\ndef k(x_ptr, w_ptr, r_ptr, out_ptr):\n    x = tl.load(x_ptr)\n    w = tl.load(w_ptr)\n"
        "    r = tl.load(r_ptr)\n    out = x\n    out = out + x + r\n    tl.store(out_ptr, out * w)\n\n\ndef host(a):\n    b = a + 1\n    return b\n"
    )
    candidates = [c.code for c in inline_kernel_temporaries(cst.parse_module(code))]
    # `w`; `x` is read twice, `out` bound twice, `r` read by a step of `out`, `b` outside a kernel
    assert len(candidates) == 1
    assert "    tl.store(out_ptr, out * tl.load(w_ptr))\n" in candidates[0] and "out = out + x + r" in candidates[0]
