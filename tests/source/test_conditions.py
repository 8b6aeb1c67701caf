import libcst as cst

from minimizer.source.passes.expressions.conditions import shorten_conditions
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and


def shortenings(code: str) -> list[str]:
    return [candidate.code for candidate in shorten_conditions(cst.parse_module(code))]


def test_a_boolean_operation_becomes_either_operand_the_right_one_first():
    assert shortenings("if a and b:\n    pass\n") == ["if b:\n    pass\n", "if a:\n    pass\n"]
    assert shortenings("y = (a or b).x\n") == ["y = (b).x\n", "y = (a).x\n"]


def test_membership_in_a_display_becomes_equality_with_one_entry():
    assert shortenings("ok = t in (f, g)\n") == ["ok = t == f\n", "ok = t == g\n"]
    assert shortenings("ok = t not in [f]\n") == ["ok = t != f\n"]
    assert shortenings("ok = t in (*rest, g)\n") == ["ok = t == g\n"]
    assert shortenings("ok = t in table\n") == []  # not a display: what it holds is not in the source


def test_a_graph_pass_keeps_only_the_test_its_rewrite_needs():
    code = (
        "import operator\n"
        "nodes = [('call_function', operator.neg), ('placeholder', None)]\n"
        "hits = 0\n"
        "for op, target in nodes:\n"
        "    if op == 'call_function' and target in (operator.neg, operator.pos):\n"
        "        hits += 1\n"
    )
    check_candidates_are_valid_and_not_larger(code, shorten_conditions)
    reduced = greedy_reduce(code, shorten_conditions, runs_and(lambda namespace: namespace["hits"] == 1))
    assert "if target == operator.neg:" in reduced


def test_a_negated_condition_is_its_test_with_the_branches_swapped():
    assert shortenings("y = a if not c else b\n") == ["y = b if c else a\n"]
    assert shortenings("if not c:\n    x = 1\nelse:\n    x = 2\n") == ["if c:\n    x = 2\nelse:\n    x = 1\n"]
    guard = "def f(c):\n    if not c:\n        # why\n        return 1\n    y = 2\n    return y\n"
    assert shortenings(guard) == ["def f(c):\n    if c:\n        y = 2\n        return y\n    # why\n    return 1\n"]
    # Without a return ending both, the code after the guard runs after its body too: no swap.
    assert shortenings("def f(c):\n    if not c:\n        g()\n    return 1\n") == []
    assert shortenings("def f(c):\n    if not c:\n        return 1\n    g()\n") == []


def test_a_swapped_guard_returns_what_the_original_returns():
    code = "def f(c):\n    if not c:\n        return 'no'\n    return 'yes'\n"
    for candidate in shortenings(code):
        namespace: dict = {}
        exec(candidate, namespace)
        assert (namespace["f"](True), namespace["f"](False)) == ("yes", "no")
