"""Fold sizes the source already states: `x = torch.randn(2, 1)` then `rows, cols = x.shape` reads `rows` as `2`.

Scripts name their sizes (`batch, dim = x.shape`, `n = x.size(0)`); once literals have shrunk, the names are
indirection the reader must follow back to the factory, and they keep a tensor's rank fixed: `x` cannot lose
its second dimension while `rows, cols = x.shape` unpacks two.
"""

from __future__ import annotations

import math
from typing import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import metadata
from minimizer.source.traversal import nodes_of_type, parent_map

__all__ = ["fold_known_shapes"]

# Factories whose positional integer arguments are the shape: `torch.randn(2, 3)`.
_FACTORY = m.Call(
    func=m.Attribute(value=m.Name("torch"), attr=m.OneOf(*(m.Name(n) for n in ("randn", "rand", "zeros", "ones", "empty"))))
)


def fold_known_shapes(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `a, b = x.shape` (or `n = x.shape[-1]`, `n = x.size(i)`, `n = x.numel()`) removed
    and its names' reads replaced by the sizes, in source order; then with every size, stride or element count
    read in an expression (`kernel[x.numel(),](x, x.stride(0), x.shape[-1])`) replaced by its value, all at once.

    Only where `x` and each name are bound once in their scope, `x` by a torch factory whose positional arguments
    are all integer literals (`torch.randn(2, 1, requires_grad=True)`), or by `.T` / `.t()` of such a tensor
    of two dimensions, and the sizes unpack exactly. A factory's tensor is contiguous, so its strides are known.
    """

    return distinct_candidates(module, [*_folds(module), _inline_folds(module)])


def _inline_folds(module: cst.Module) -> cst.Module | None:
    scopes = metadata(module).resolve(ScopeProvider)
    parents = parent_map(module)
    reads = {}
    for node in nodes_of_type(module, cst.Subscript) + nodes_of_type(module, cst.Call):
        scope = scopes.get(node)
        if scope is None or isinstance(parents.get(node), cst.Assign) or m.matches(node, _method_call("size", [])):
            continue  # an assignment of a size is the statement fold's (its name goes too); `x.size()` is a shape
        sizes = _sizes(node, scope, parents)
        if sizes is not None:
            reads[node] = cst.Integer(str(sizes[0]))
    return replace_nodes(module, reads) if reads else None


def _folds(module: cst.Module) -> Iterator[cst.Module | None]:
    scopes = metadata(module).resolve(ScopeProvider)
    parents = parent_map(module)
    for line in nodes_of_type(module, cst.SimpleStatementLine):
        if len(line.body) != 1 or not m.matches(line.body[0], m.Assign(targets=[m.AssignTarget()])):
            continue
        assign = line.body[0]
        scope = scopes.get(assign)
        if scope is None:
            continue
        names = _target_names(assign.targets[0].target)
        sizes = _sizes(assign.value, scope, parents)
        if names is None or sizes is None or len(names) != len(sizes):
            continue
        reads: dict = {}
        for name, size in zip(names, sizes):
            bindings = scope.assignments[name]
            if len(bindings) != 1:
                break
            for access in next(iter(bindings)).references:
                reads[access.node] = cst.Integer(str(size))
        else:
            yield lambda line=line, reads=reads: replace_nodes(module, {line: cst.RemovalSentinel.REMOVE, **reads})


def _target_names(target: cst.BaseExpression) -> list[str] | None:
    if isinstance(target, cst.Name):
        return [target.value]
    if isinstance(target, (cst.Tuple, cst.List)) and all(
        isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in target.elements
    ):
        return [e.value.value for e in target.elements]
    return None


def _sizes(value: cst.BaseExpression, scope, parents: dict) -> list[int] | None:
    """The sizes `value` reads, if it reads them from a tensor whose factory states its shape: `x.shape`,
    `x.size()`, `x.shape[i]`, `x.size(i)` (`i` may count from the end), `x.stride(i)`, `x.numel()`, `len(x)`."""

    if m.matches(value, m.Attribute(value=m.Name(), attr=m.Name("shape")) | _method_call("size", [])):
        tensor = value.value.value if isinstance(value, cst.Attribute) else value.func.value.value
        return _factory_shape(tensor, scope, parents)
    if m.matches(value, _method_call("numel", [])):
        shape = _factory_shape(value.func.value.value, scope, parents)
        return [math.prod(shape)] if shape is not None else None
    if m.matches(value, m.Call(func=m.Name("len"), args=[m.Arg(value=m.Name(), keyword=None)])):
        shape = _factory_shape(value.args[0].value.value, scope, parents)
        return shape[:1] if shape else None
    index = None
    if m.matches(value, m.Subscript(value=m.Attribute(value=m.Name(), attr=m.Name("shape")))):
        tensor = value.value.value.value
        if len(value.slice) == 1 and isinstance(value.slice[0].slice, cst.Index):
            index = _literal_index(value.slice[0].slice.value)
    elif m.matches(value, _method_call("size", [_INDEX]) | _method_call("stride", [_INDEX])):
        tensor = value.func.value.value
        index = _literal_index(value.args[0].value)
        if value.func.attr.value == "stride":
            layout = _factory_layout(tensor, scope, parents)
            return _at(layout[1], index) if layout is not None else None
    if index is None:
        return None
    shape = _factory_shape(tensor, scope, parents)
    return _at(shape, index) if shape is not None else None


def _method_call(name: str, args: list) -> m.Call:
    return m.Call(func=m.Attribute(value=m.Name(), attr=m.Name(name)), args=args)


def _literal_index(node: cst.BaseExpression) -> int | None:
    """`1` -> 1, `-1` -> -1; anything else -> None."""

    if isinstance(node, cst.Integer):
        return int(node.value)
    if m.matches(node, m.UnaryOperation(operator=m.Minus(), expression=m.Integer())):
        return -int(node.expression.value)
    return None


def _at(sizes: list[int], index: int | None) -> list[int] | None:
    return [sizes[index]] if index is not None and -len(sizes) <= index < len(sizes) else None


_INDEX = m.Arg(value=m.Integer() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer()), keyword=None)
_TRANSPOSED = m.Attribute(value=m.Name(), attr=m.Name("T")) | m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("t")), args=[])


def _factory_shape(name: str, scope, parents: dict) -> list[int] | None:
    layout = _factory_layout(name, scope, parents)
    return layout[0] if layout is not None else None


def _factory_layout(name: str, scope, parents: dict, depth: int = 0) -> tuple[list[int], list[int]] | None:
    """The shape and strides of the tensor `name` holds, if a factory with a literal shape (or `.T` of one)
    made it."""

    bindings = scope[name] if name in scope else set()
    if len(bindings) != 1 or depth > 4:
        return None
    target = next(iter(bindings)).node
    holder = parents.get(target)
    node = parents.get(holder)
    if not isinstance(holder, cst.AssignTarget) or not isinstance(node, cst.Assign) or len(node.targets) != 1:
        return None
    value = node.value
    if m.matches(value, _TRANSPOSED):
        source = value.value.value if isinstance(value, cst.Attribute) else value.func.value.value
        layout = _factory_layout(source, scope, parents, depth + 1)
        if layout is None or len(layout[0]) != 2:
            return None
        return layout[0][::-1], layout[1][::-1]
    if not m.matches(value, _FACTORY):
        return None
    positional = [arg.value for arg in value.args if arg.keyword is None and not arg.star]
    if not positional or not all(isinstance(v, cst.Integer) for v in positional):
        return None
    shape = [int(v.value) for v in positional]
    strides = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        strides[i] = strides[i + 1] * shape[i + 1]
    return shape, strides
