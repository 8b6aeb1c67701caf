"""Literal tensors written as the factory that makes them: `torch.tensor([[1.0, 1.0], [1.0, 1.0]])` and
`torch.full((2, 2), 1.0)` become `torch.ones(2, 2)`; `torch.tensor([0, 1, 2, 3])` becomes `torch.arange(4)`;
`torch.tensor([[3.03, 1.11, ...], ...])` of many values becomes `torch.rand(16, 3)`.

A lifted graph's recorded values and a script's hand-written inputs spell a tensor element by element. Where
every element is the same, or the elements count up by one step, the factory holds the same values and tells the
reader so at once (`constant_tensors_to_factories`). Where they are values of no pattern, what a bug needs of
them is seldom each one: a draw of the same shape, dtype and sign holds what it usually needs, in a few tokens,
and the oracle says whether it does (`literal_tensors_to_draws`; an infinity or a NaN among the values stays
written, since a draw never holds one). A draw comes from the seed the harness and the repro's header line set.
Integers are rewritten only to integer factories: `torch.tensor([1, 1])` is int64 where `torch.ones(2)` is
float32, and the candidate would be another program.
"""

from __future__ import annotations

import math
from typing import Callable, Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all

__all__ = ["constant_tensors_to_factories", "literal_tensors_to_draws"]

_FACTORY_FOR = {1.0: "ones", 0.0: "zeros"}
# Fewer values than this read as well as any factory (`torch.tensor([1.5, -2.0])`), and often are the bug's own.
_FEWEST_DRAWN = 4
_FLOATING_DTYPES = {"float", "float16", "float32", "float64", "half", "double", "bfloat16"}


def constant_tensors_to_factories(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one literal tensor written as the factory of the same values, in source order:
    `torch.tensor(<nested lists of one float>)` and `torch.full(<shape>, 1.0 or 0.0)` as `torch.ones` /
    `torch.zeros` / `torch.full`, and `torch.tensor(<a list counting up by one step>)` as `torch.arange`.
    Keyword arguments (`dtype=`, `device=`, `requires_grad=`) stay as they were."""

    return distinct_candidates(module, _rewrites(module, _as_factory))


def literal_tensors_to_draws(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one literal tensor of at least four finite values and no pattern written as a draw of
    its shape: `torch.rand` where no value is negative, `torch.randn` otherwise, `torch.randint(low, high + 1,
    shape)` for integers; keyword arguments stay."""

    return distinct_candidates(module, _rewrites(module, _as_draw))


def _rewrites(module: cst.Module, rewrite: Callable[[cst.Call], cst.Call | None]) -> Iterator[object]:
    torch_call = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name("tensor") | m.Name("full")))
    for call in find_all(module, torch_call):
        if any(arg.star for arg in call.args):  # type: ignore[attr-defined]
            continue
        factory = rewrite(call)  # type: ignore[arg-type]
        if factory is not None:
            yield lambda c=call, f=factory: replace_node(module, c, f)


def _split(call: cst.Call) -> tuple[str, list[cst.Arg], list[cst.Arg]]:
    positional = [arg for arg in call.args if arg.keyword is None]
    keywords = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in call.args if arg.keyword is not None]
    return call.func.attr.value, positional, keywords  # type: ignore[attr-defined]


def _as_factory(call: cst.Call) -> cst.Call | None:
    name, positional, keywords = _split(call)
    if name == "tensor" and len(positional) == 1:
        found = _nested_numbers(positional[0].value)
        if found is None:
            return None
        shape, values, literals = found
        if len(set(map(_same_key, values))) == 1 and all(isinstance(v, float) for v in values):
            value = values[0]
            if value not in _FACTORY_FOR and math.prod(shape) < 4:
                return None  # `torch.full((2,), 1.5)` is longer than `torch.tensor([1.5, 1.5])`
            return _factory(value, literals[0], [cst.Integer(str(size)) for size in shape], keywords)
        return _as_arange(shape, values, keywords)
    if name == "full" and len(positional) == 2 and isinstance(positional[1].value, cst.Float):
        value = float(positional[1].value.value)
        if value not in _FACTORY_FOR:
            return None
        size = positional[0].value
        sizes = [el.value for el in size.elements] if isinstance(size, (cst.Tuple, cst.List)) else [size]
        return _factory(value, positional[1].value, sizes, keywords)
    return None


def _same_key(value: float | int) -> object:
    return "nan" if isinstance(value, float) and math.isnan(value) else value


def _factory(
    value: float, literal: cst.BaseExpression, sizes: list[cst.BaseExpression], keywords: list[cst.Arg]
) -> cst.Call:
    name = _FACTORY_FOR.get(value, "full")
    args = [cst.Arg(size) for size in sizes]
    if name == "full":
        args = [cst.Arg(cst.Tuple([cst.Element(size) for size in sizes])), cst.Arg(literal)]
    return _torch_call(name, args + keywords)


def _as_arange(shape: list[int], values: list, keywords: list[cst.Arg]) -> cst.Call | None:
    """`torch.arange(stop)`, `torch.arange(start, stop)` for a list of integers (or of integral floats, written
    with a float end) counting up by one; ``None`` for any other list."""

    if len(shape) != 1 or len(values) < 3 or not all(_integral(v) for v in values):
        return None
    start = values[0]
    if [v - start for v in values] != list(range(len(values))):
        return None
    floats = isinstance(start, float)
    ends = [int(start), int(start) + len(values)] if start else [len(values)]
    args = [cst.Arg(cst.Float(f"{end}.0") if floats else cst.Integer(str(end))) for end in ends]
    return _torch_call("arange", args + keywords)


def _integral(value: float | int) -> bool:
    return isinstance(value, int) or (math.isfinite(value) and value == int(value) and abs(value) < 2**24)


def _as_draw(call: cst.Call) -> cst.Call | None:
    name, positional, keywords = _split(call)
    if name != "tensor" or len(positional) != 1:
        return None
    found = _nested_numbers(positional[0].value)
    if found is None or math.prod(found[0]) < _FEWEST_DRAWN or _as_factory(call) is not None:
        return None
    shape, values, _ = found
    if not all(math.isfinite(v) for v in values):
        return None
    sizes = [cst.Arg(cst.Integer(str(size))) for size in shape]
    if all(isinstance(v, int) for v in values) and not _floating(keywords):
        bounds = [cst.Arg(_number(min(values))), cst.Arg(_number(max(values) + 1))]
        size = cst.Tuple([cst.Element(cst.Integer(str(n))) for n in shape])
        return _torch_call("randint", [*bounds, cst.Arg(size), *keywords])
    return _torch_call("rand" if min(values) >= 0 else "randn", sizes + keywords)


def _floating(keywords: list[cst.Arg]) -> bool:
    dtype = next((arg.value for arg in keywords if arg.keyword and arg.keyword.value == "dtype"), None)
    return isinstance(dtype, cst.Attribute) and dtype.attr.value in _FLOATING_DTYPES


def _number(value: int) -> cst.BaseExpression:
    literal = cst.Integer(str(abs(value)))
    return cst.UnaryOperation(cst.Minus(), literal) if value < 0 else literal


def _torch_call(name: str, args: list[cst.Arg]) -> cst.Call:
    return cst.Call(func=cst.Attribute(cst.Name("torch"), cst.Name(name)), args=args)


def _nested_numbers(node: cst.BaseExpression) -> tuple[list[int], list, list[cst.BaseExpression]] | None:
    """The shape, the values (row-major) and their literals of a rectangular nested list of number literals
    (`1`, `-2.5`, `float("inf")`, `math.nan`); ``None`` otherwise."""

    number = _number_literal(node)
    if number is not None:
        return [], [number], [node]
    if not isinstance(node, (cst.List, cst.Tuple)) or not node.elements:
        return None
    found = [_nested_numbers(el.value) if isinstance(el, cst.Element) else None for el in node.elements]
    if any(item is None for item in found):
        return None
    shapes = {tuple(shape) for shape, _, _ in found}  # type: ignore[misc]
    if len(shapes) != 1:
        return None
    values = [v for _, part, _ in found for v in part]  # type: ignore[misc]
    literals = [lit for _, _, part in found for lit in part]  # type: ignore[misc]
    return [len(node.elements), *shapes.pop()], values, literals


_SPECIAL = {"inf": math.inf, "nan": math.nan, "-inf": -math.inf}


def _number_literal(node: cst.BaseExpression) -> float | int | None:
    if isinstance(node, cst.Float):
        return float(node.value)
    if isinstance(node, cst.Integer):
        return int(node.value, 0)
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number_literal(node.expression)
        return None if inner is None else -inner
    if m.matches(node, m.Call(func=m.Name("float"), args=[m.Arg(m.SimpleString())])):
        return _SPECIAL.get(node.args[0].value.evaluated_value.strip().lower())  # type: ignore[attr-defined]
    if m.matches(node, m.Attribute(value=m.Name("math"), attr=m.Name("inf") | m.Name("nan"))):
        return _SPECIAL[node.attr.value]  # type: ignore[attr-defined]
    return None
