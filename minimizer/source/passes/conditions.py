"""A condition made of several tests is one of them: `a and b` -> `b`, `x in (f, g)` -> `x == g`.

The code a user's backend or graph pass runs on the graph guards each rewrite with the tests its author needed
for the general case (`node.op == "call_function" and node.target in (F.gelu, torch._C._nn.gelu)`); the bug
needs one of them, and which one only a run can tell. Deleting statements cannot shorten a test: it takes the
whole `if`.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, replace_node
from minimizer.source.traversal import find_all

__all__ = ["shorten_conditions"]

_DISPLAY = m.Tuple() | m.List() | m.Set()
_MEMBERSHIP = m.Comparison(comparisons=[m.ComparisonTarget(operator=m.In() | m.NotIn(), comparator=_DISPLAY)])


def shorten_conditions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one boolean operation replaced by one of its operands (the right one first), or one
    membership test in a tuple, list or set display replaced by an equality with one of its entries (`not in`:
    an inequality), in source order."""

    return distinct_candidates(module, _shortenings(module))


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
