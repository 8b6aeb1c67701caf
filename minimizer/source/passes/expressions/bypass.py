"""Bypass operations: replace a call, binary operation or tensor attribute by its operand.

We cannot know types statically, so operands that look like values (names, attributes, calls, subscripts,
arithmetic) are tried and literals are not: `torch.relu(x)` becomes `x`, `x.view(2, 3)` becomes `x`, never `2`.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from libcst.metadata import ExpressionContext, ExpressionContextProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.passes.scopes import metadata
from minimizer.source.patterns import TORCH_COMPILE, is_literal
from minimizer.source.substitution import substitute_expression
from minimizer.source.traversal import find_all, children, parent_map

# Replacing `torch.compile(f)` by `f` removes the bug under search by construction; it only wastes an oracle call.
COMPILE_CALL = m.Call(
    func=TORCH_COMPILE
    | m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("_dynamo")), attr=m.Name("optimize"))
)
# A method call whose receiver could be a value; in `super().__init__()` and `self.layer(x)` it is not.
_METHOD = m.Attribute(value=~m.Call(func=m.Name("super")) & ~m.Name("self"))
# Tensor attributes that return a view or a variant of the receiver with the same role in a repro.
_TENSOR_VIEW_ATTRIBUTES = m.Attribute(attr=m.Name("T") | m.Name("mT") | m.Name("H") | m.Name("mH") | m.Name("data") | m.Name("real"))


def bypass_operators(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one call, binary operation or conditional expression replaced by one of its operands.

    Operations come outer first in source order; per operation: a method call's receiver (`x.f(a)` -> `x`), then
    positional arguments, then keyword argument values; for `a + b`, `a` then `b`; for `a if c else b`, `a` then
    `b` (a literal too). Literal operands, the receiver of
    a module function (`torch.relu`, `F.relu`: the root name is an import), `torch.compile(...)` and calls inside
    decorators are skipped.
    """
    imported = imported_names(module)
    return distinct_candidates(module, _bypasses(module, imported))


def _bypasses(module: cst.Module, imported: set[str]) -> Iterator[cst.Module | None]:
    for node in _operations(module):
        for operand in _operands(node, imported):
            yield lambda: replace_node(module, node, substitute_expression(node, operand))


def _operations(node: cst.CSTNode) -> Iterator[cst.Call | cst.BinaryOperation | cst.IfExp]:
    """Calls, binary operations and conditional expressions in pre-order (outer first), not descending into decorators or imports."""
    if isinstance(node, (cst.Decorator, cst.Import, cst.ImportFrom)):
        return
    if isinstance(node, (cst.BinaryOperation, cst.IfExp)) or (
        isinstance(node, cst.Call) and not m.matches(node, COMPILE_CALL)
    ):
        yield node
    for child in children(node):
        yield from _operations(child)


def _operands(node: cst.Call | cst.BinaryOperation | cst.IfExp, imported: set[str]) -> list[cst.BaseExpression]:
    if isinstance(node, cst.IfExp):
        # A condition the repro does not need is constant for it: either branch, a literal one included.
        return [node.body, node.orelse]
    if m.matches(node, m.BinaryOperation()):
        candidates = [node.left, node.right]
    else:
        candidates = []
        if m.matches(node.func, _METHOD) and root_name(node.func.value) not in imported:
            candidates.append(node.func.value)
        candidates += [arg.value for arg in node.args if not arg.star and arg.keyword is None]
        candidates += [arg.value for arg in node.args if arg.keyword is not None]
    return [operand for operand in candidates if not is_literal(operand)]


def root_name(node: cst.BaseExpression) -> str | None:
    while m.matches(node, m.Attribute()):
        node = node.value
    return node.value if m.matches(node, m.Name()) else None


def imported_names(module: cst.Module) -> set[str]:
    names = set()
    for alias in find_all(module, m.ImportAlias()):
        bound = alias.evaluated_alias or alias.evaluated_name
        names.add(bound.split(".")[0])
    return names

_FIELD_OF_METHOD_RESULT = m.Attribute(value=m.Call(func=_METHOD))


def bypass_attributes(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one tensor-attribute load replaced by its receiver, outer first in source order.

    The attributes are `T`, `mT`, `H`, `mH`, `data` and `real` (`skew(v).T` -> `skew(v)`); assignments to them
    (`p.data = x`) and attributes of imported modules (`np.real`) are left alone. Then, a field read from a
    method's result becomes the method's receiver (`q.max(dim=-1).values` -> `q`).
    """
    return distinct_candidates(module, _attribute_bypasses(module))


def _attribute_bypasses(module: cst.Module) -> Iterator[cst.Module | None]:
    imported = imported_names(module)
    contexts = metadata(module).resolve(ExpressionContextProvider)
    for node in find_all(module, _TENSOR_VIEW_ATTRIBUTES):
        if contexts.get(node) == ExpressionContext.LOAD and root_name(node.value) not in imported:
            yield lambda: replace_node(module, node, substitute_expression(node, node.value))
    # A field of a method's result (`q.max(dim=-1).values`): bypassing the call alone leaves `q.values`.
    parents = parent_map(module)
    for node in find_all(module, _FIELD_OF_METHOD_RESULT):
        receiver = node.value.func.value
        called = m.matches(parents.get(node), m.Call()) and parents[node].func is node
        if contexts.get(node) == ExpressionContext.LOAD and not called and root_name(receiver) not in imported:
            yield lambda: replace_node(module, node, substitute_expression(node, receiver))
