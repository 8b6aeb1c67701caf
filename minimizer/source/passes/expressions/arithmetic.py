"""Replace a torch function's call by cheap arithmetic on one of its tensor operands: `F.conv2d(x, w)` -> `w * 2`.

What many bugs need of an operator is only that its output is a new tensor computed from an input: an
intermediate on autograd's tape, a node of the graph between input and output. The operator, its other operands
and often an import are noise. `bypass_operators` tries the operand itself, which is not new (an input, not an
intermediate), so the candidate fails differently; `layers_to_leaves` does this for layers, this pass for
functions of imported modules (`torch.*`, `F.*`).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.passes.expressions.bypass import COMPILE_CALL, imported_names, root_name
from minimizer.source.patterns import is_literal
from minimizer.source.substitution import as_operand, substitute_under
from minimizer.source.traversal import find_all, parent_map

__all__ = ["operators_to_arithmetic"]

# Calls of torch functions whose operands are not tensors an operator computes from.
_NOT_AN_OPERATOR = m.Call(func=m.Attribute(attr=m.Name("compile") | m.Name("no_grad") | m.Name("manual_seed")))


def operators_to_arithmetic(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one call of an imported module's function (outer first, in source order) replaced by
    `OPERAND * 2`, for each of its positional operands that is not a literal."""

    return distinct_candidates(module, _replacements(module))


def _replacements(module: cst.Module) -> Iterator:
    imported = imported_names(module)
    parents = parent_map(module)
    for call in find_all(module, m.Call(func=m.Attribute())):
        if m.matches(call, COMPILE_CALL | _NOT_AN_OPERATOR) or root_name(call.func) not in imported:
            continue
        for arg in call.args:
            if arg.keyword is None and not arg.star and not is_literal(arg.value):
                doubled = cst.BinaryOperation(left=as_operand(arg.value), operator=cst.Multiply(), right=cst.Integer("2"))
                bare = substitute_under(parents.get(call), call, doubled)
                yield lambda call=call, bare=bare: replace_node(module, call, bare)

