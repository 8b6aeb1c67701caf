"""A condition made of several tests is one of them: `a and b` -> `b`, `x in (f, g)` -> `x == g`; a negated one
is its test with the branches swapped: `if not c: return a` then `return b` -> `if c: return b` then `return a`.

The code a user's backend or graph pass runs on the graph guards each rewrite with the tests its author needed
for the general case (`node.op == "call_function" and node.target in (F.gelu, torch._C._nn.gelu)`); the bug
needs one of them, and which one only a run can tell. Deleting statements cannot shorten a test: it takes the
whole `if`.
"""

from __future__ import annotations

import itertools
from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all, parent_map

__all__ = ["shorten_conditions"]

_DISPLAY = m.Tuple() | m.List() | m.Set()
_MEMBERSHIP = m.Comparison(comparisons=[m.ComparisonTarget(operator=m.In() | m.NotIn(), comparator=_DISPLAY)])


def shorten_conditions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one boolean operation replaced by one of its operands (the right one first), or one
    membership test in a tuple, list or set display replaced by an equality with one of its entries (`not in`:
    an inequality), in source order; then with one negated condition's `not` dropped and its branches swapped."""

    return distinct_candidates(module, itertools.chain(_shortenings(module), _negations_dropped(module)))


def _shortenings(module: cst.Module) -> Iterator[cst.Module | None]:
    for node in find_all(module, m.BooleanOperation() | _MEMBERSHIP):
        if isinstance(node, cst.BooleanOperation):
            for operand in (node.right, node.left):
                yield lambda n=node, o=operand: replace_node(module, n, _parenthesized_as(n, o))
            continue
        target = node.comparisons[0]  # type: ignore[attr-defined]
        equal = cst.Equal() if isinstance(target.operator, cst.In) else cst.NotEqual()
        for element in target.comparator.elements:
            if not isinstance(element, cst.Element):
                continue  # `*rest`: no one value to compare with
            compared = cst.ComparisonTarget(operator=equal, comparator=element.value)
            yield lambda n=node, c=compared: replace_node(module, n, n.with_changes(comparisons=[c]))


def _parenthesized_as(whole: cst.BooleanOperation, operand: cst.BaseExpression) -> cst.BaseExpression:
    """``operand`` taking ``whole``'s place, with ``whole``'s parentheses (`(a or b).x` -> `(b).x`)."""

    return operand.with_changes(lpar=whole.lpar, rpar=whole.rpar) if whole.lpar else operand


_NEGATED = m.UnaryOperation(operator=m.Not())
_RETURN_LINE = m.SimpleStatementLine(body=[m.ZeroOrMore(), m.Return()])


def _negations_dropped(module: cst.Module) -> Iterator[cst.Module | None]:
    """`b if not c else a` -> `a if c else b`; `if not c: A else: B` -> `if c: B else: A`; and a guard that
    returns, `if not c: A` (A ends in a return) then B to the end of its block (B ends in a return too), ->
    `if c: B` then A. Each reads the same, one token shorter."""

    parents = parent_map(module)
    for node in find_all(module, m.IfExp(test=_NEGATED) | m.If(test=_NEGATED)):
        test = node.test.expression  # type: ignore[attr-defined]
        if isinstance(node, cst.IfExp):
            yield lambda n=node, t=test: replace_node(module, n, n.with_changes(test=t, body=n.orelse, orelse=n.body))
        elif isinstance(node.orelse, cst.Else):  # type: ignore[attr-defined]
            swapped = node.with_changes(test=test, body=node.orelse.body, orelse=node.orelse.with_changes(body=node.body))  # type: ignore[attr-defined]
            yield lambda n=node, w=swapped: replace_node(module, n, w)
        elif node.orelse is None:  # type: ignore[attr-defined]
            yield lambda n=node, t=test: _guard_swapped(module, n, t, parents.get(n))


def _guard_swapped(module: cst.Module, guard: cst.If, test: cst.BaseExpression, block: cst.CSTNode | None) -> cst.Module | None:
    if not isinstance(block, cst.IndentedBlock) or not isinstance(guard.body, cst.IndentedBlock):
        return None
    statements = list(block.body)
    at = statements.index(guard)
    rest = statements[at + 1 :]
    if not rest or not m.matches(rest[-1], _RETURN_LINE) or not m.matches(guard.body.body[-1], _RETURN_LINE):
        return None
    swapped = guard.with_changes(test=test, body=guard.body.with_changes(body=rest))
    return replace_node(module, block, block.with_changes(body=[*statements[:at], swapped, *guard.body.body]))
