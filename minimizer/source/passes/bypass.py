"""Bypass operations: replace a call, binary operation or tensor attribute by its operand, or drop a layer.

We cannot know types statically, so operands that look like values (names, attributes, calls, subscripts,
arithmetic) are tried and literals are not: `torch.relu(x)` becomes `x`, `x.view(2, 3)` becomes `x`, never `2`.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from libcst.metadata import ExpressionContext, ExpressionContextProvider

from minimizer.source.cst_utils import (
    TORCH_COMPILE,
    RemovalRepairingTransformer,
    distinct_candidates,
    is_literal,
    metadata,
    remove_node,
    replace_node,
    substitute_expression,
)
from minimizer.source.traversal import find_all, children, parent_map

# Replacing `torch.compile(f)` by `f` removes the bug under search by construction; it only wastes an oracle call.
COMPILE_CALL = m.Call(
    func=TORCH_COMPILE
    | m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("_dynamo")), attr=m.Name("optimize"))
)
# A method call whose receiver could be a value; in `super().__init__()` and `self.layer(x)` it is not.
_METHOD = m.Attribute(value=~m.Call(func=m.Name("super")) & ~m.Name("self"))
_SEQUENTIAL = m.Call(func=m.Name("Sequential") | m.Attribute(attr=m.Name("Sequential")))
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


def remove_layers(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one layer of a module class removed, in source order.

    A layer is `self.NAME = <call>(...)` in a class's `__init__`: the candidate drops that assignment, replaces
    each `self.NAME(h, ...)` in the class by `h`, and drops statements that become `x = x`. A layer that is an
    element of an `nn.Sequential(...)` call in `__init__` is dropped from the argument list instead. Layers whose
    `self.NAME` is used other than by calling it with a first positional argument are skipped.
    """
    return distinct_candidates(module, _layer_removals(module))


def _layer_removals(module: cst.Module) -> Iterator[cst.Module | None]:
    for class_def in find_all(module, m.ClassDef()):
        for init in m.findall(class_def.body, m.FunctionDef(name=m.Name("__init__"))):
            for node in _layer_sites(init):
                if m.matches(node, m.Arg()):
                    yield lambda: remove_node(module, node)
                elif _only_called_with_input(class_def, _layer_name(node)):
                    yield lambda: module.visit(_LayerRemover(class_def, node, _layer_call(_layer_name(node))))


def _layer_sites(init: cst.FunctionDef) -> Iterator[cst.Assign | cst.Arg]:
    """`self.NAME = call(...)` statements and positional arguments of `Sequential(...)` calls, in source order."""
    layer = m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name("self")))], value=m.Call())
    for node in m.findall(init.body, layer | _SEQUENTIAL):
        if m.matches(node, m.Assign()):
            yield node
        else:
            yield from (arg for arg in node.args if arg.keyword is None and not arg.star)


def _layer_name(assign: cst.Assign) -> str:
    return assign.targets[0].target.attr.value


def _layer_call(name: str) -> m.Call:
    return m.Call(func=m.Attribute(value=m.Name("self"), attr=m.Name(name)))


def _only_called_with_input(class_def: cst.ClassDef, name: str) -> bool:
    uses = m.findall(class_def, m.Attribute(value=m.Name("self"), attr=m.Name(name)))
    calls = m.findall(class_def, _layer_call(name))
    callable_with_input = all(call.args and not call.args[0].star and call.args[0].keyword is None for call in calls)
    # Every use is either a call's function or the assignment target itself.
    return callable_with_input and len(uses) <= len(calls) + 1


def remove_named_layers(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one layer bound to a name removed, in source order: `head = nn.Linear(2, 1)` (alone on
    its line, the only binding of `head` in the script), every read of `head` a call with an input first
    (`head(h)`); the candidate drops the binding and turns every call into its input, on every side of a check at
    once (`allclose(head(out), head(ref))` -> `allclose(out, ref)`): a layer applied to both compared values
    can go from both, never from one (``oracles.layers``)."""

    return distinct_candidates(module, _named_layer_removals(module))


def _named_layer_removals(module: cst.Module) -> Iterator[cst.Module | None]:
    binding = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call())])
    imported = imported_names(module)
    for statement in find_all(module, binding):
        assign = statement.body[0]
        name = assign.targets[0].target.value
        call = m.Call(func=m.Name(name))
        calls = find_all(module, call)
        reads = [n for n in find_all(module, m.Name(name)) if n is not assign.targets[0].target]
        bound = find_all(module, m.AssignTarget(target=m.Name(name)) | m.Param(name=m.Name(name)))
        if len(bound) == 1 and name not in imported and len(reads) == len(calls) and calls and all(
            _called_with_input(c) for c in calls
        ):
            yield lambda a=assign, c=call: module.visit(_LayerRemover(module, a, c))


def _called_with_input(call: cst.Call) -> bool:
    return bool(call.args) and not call.args[0].star and call.args[0].keyword is None


class _LayerRemover(RemovalRepairingTransformer):
    """Inside ``within`` (a class, or the module): drop one layer's assignment, turn its calls into their input,
    drop `x = x` leftovers."""

    def __init__(self, within: cst.CSTNode, assignment: cst.Assign, call: m.Call) -> None:
        super().__init__()
        self._within = within
        self._assignment = assignment
        self._call = call
        self._inside = False

    def on_visit(self, node: cst.CSTNode) -> bool:
        self._inside = self._inside or node is self._within
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        if original_node is self._within:
            self._inside = False
        return super().on_leave(original_node, updated_node)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign):
        if original_node is self._assignment:
            return cst.RemovalSentinel.REMOVE
        if self._inside and _is_self_assignment(updated_node) and not updated_node.deep_equals(original_node):
            return cst.RemovalSentinel.REMOVE
        return updated_node

    def leave_Call(self, original_node: cst.Call, updated_node: cst.Call):
        if self._inside and m.matches(updated_node, self._call):
            return substitute_expression(updated_node, updated_node.args[0].value)
        return super().leave_Call(original_node, updated_node)


def _is_self_assignment(assign: cst.Assign) -> bool:
    # `x = x` left where `x = self.layer(x)` stood.
    value = assign.value
    return m.matches(value, m.Name()) and all(
        m.matches(target.target, m.Name(value.value)) for target in assign.targets
    )
