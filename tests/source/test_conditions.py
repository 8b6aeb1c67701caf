import libcst as cst

from minimizer.source.passes.conditions import shorten_conditions
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
