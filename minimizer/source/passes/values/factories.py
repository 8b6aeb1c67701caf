"""Constant tensors written as the factory that says what they hold: `torch.tensor([[1.0, 1.0], [1.0, 1.0]])` and
`torch.full((2, 2), 1.0)` become `torch.ones(2, 2)`.

A lifted graph's recorded values and a script's hand-written inputs spell a constant tensor element by element;
the factory is shorter and tells the reader at once that every element is the same. Only floating values are
rewritten: `torch.tensor([1, 1])` is int64 where `torch.ones(2)` is float32, and the candidate would be another
program.
"""

from __future__ import annotations

import math
from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all

__all__ = ["constant_tensors_to_factories"]

_FACTORY_FOR = {1.0: "ones", 0.0: "zeros"}


def constant_tensors_to_factories(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one constant float tensor written as `torch.ones` / `torch.zeros` / `torch.full`, in
    source order: `torch.tensor(<nested lists of one float>)` and `torch.full(<shape>, 1.0 or 0.0)`. Keyword
    arguments (`dtype=`, `device=`, `requires_grad=`) stay as they were."""

    return distinct_candidates(module, _rewrites(module))


def _rewrites(module: cst.Module) -> Iterator[object]:
    torch_call = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name("tensor") | m.Name("full")))
    for call in find_all(module, torch_call):
        factory = _as_factory(call)  # type: ignore[arg-type]
        if factory is not None:
            yield lambda c=call, f=factory: replace_node(module, c, f)


def _as_factory(call: cst.Call) -> cst.Call | None:
    positional = [arg for arg in call.args if arg.keyword is None and not arg.star]
    keywords = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in call.args if arg.keyword is not None]
    if any(arg.star for arg in call.args):
        return None
    name = call.func.attr.value  # type: ignore[attr-defined]
    if name == "tensor" and len(positional) == 1:
        found = _constant_nested_list(positional[0].value)
        if found is None:
            return None
        shape, value, literal = found
        if value not in _FACTORY_FOR and math.prod(shape) < 4:
            return None  # `torch.full((2,), 1.5)` is longer than `torch.tensor([1.5, 1.5])`
        return _factory(value, literal, [cst.Integer(str(size)) for size in shape], keywords)
    if name == "full" and len(positional) == 2 and isinstance(positional[1].value, cst.Float):
        value = float(positional[1].value.value)
        if value not in _FACTORY_FOR:
            return None
        size = positional[0].value
        sizes = [el.value for el in size.elements] if isinstance(size, (cst.Tuple, cst.List)) else [size]
        return _factory(value, positional[1].value, sizes, keywords)
    return None


def _factory(
    value: float, literal: cst.BaseExpression, sizes: list[cst.BaseExpression], keywords: list[cst.Arg]
) -> cst.Call:
    name = _FACTORY_FOR.get(value, "full")
    args = [cst.Arg(size) for size in sizes]
    if name == "full":
        args = [cst.Arg(cst.Tuple([cst.Element(size) for size in sizes])), cst.Arg(literal)]
    return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name(name)), args=args + keywords)


def _constant_nested_list(node: cst.BaseExpression) -> tuple[list[int], float, cst.BaseExpression] | None:
    """The shape, the one value and its first literal of a rectangular nested list of equal float literals;
    ``None`` otherwise."""

    if isinstance(node, cst.Float):
        return [], float(node.value), node
    negative = isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus)
    if negative and isinstance(node.expression, cst.Float):  # type: ignore[attr-defined]
        return [], -float(node.expression.value), node  # type: ignore[attr-defined]
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    found = [_constant_nested_list(el.value) if isinstance(el, cst.Element) else None for el in node.elements]
    if any(item is None for item in found):
        return None
    shapes = {tuple(shape) for shape, _, _ in found}  # type: ignore[misc]
    values = {value for _, value, _ in found}  # type: ignore[misc]
    if len(shapes) != 1 or len(values) != 1:
        return None
    return [len(node.elements), *shapes.pop()], values.pop(), found[0][2]  # type: ignore[index]
