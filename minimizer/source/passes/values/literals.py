"""Passes that shrink integer literals and tensor shapes.

Sizes in a repro rarely matter beyond "more than one element", but they must stay consistent with each other:
`nn.Linear(64, 64)` only accepts `torch.randn(8, 64)`. So literals shrink jointly per value first (every 64
at once), and only then one occurrence at a time.
"""

from __future__ import annotations

from typing import Callable, Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_nodes, replace_nodes
from minimizer.source.traversal import find_all, walk

__all__ = ["shrink_int_literals", "shrink_shapes"]


def shrink_int_literals(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with non-negative integer literals made smaller.

    First, for each distinct value (largest first), every occurrence of that value at once goes to 1, 2, then half
    the value. Then, for values that occur more than once, each occurrence alone goes to 1, then half.
    Literals under a unary minus (`view(-1)`) are left alone. A value never grows, and never reaches 0: most
    integers in a model are sizes, and an empty tensor or a `Linear(0, 0)` is a degenerate program that a
    compiler engineer will not accept as a repro (and `1 -> 0` saves no token).
    """
    return distinct_candidates(module, _int_literal_candidates(module))


def _int_literal_candidates(module: cst.Module) -> Iterator[cst.Module]:
    by_value = _group_by_value(_shrinkable_integers(module))
    for value in sorted(by_value, reverse=True):
        for target in _smaller_targets(value, (1, 2, value // 2)):
            yield _with_int_values(module, by_value[value], target)
    for value in sorted(by_value, reverse=True):
        occurrences = by_value[value]
        if len(occurrences) < 2:
            continue
        for node in occurrences:
            for target in _smaller_targets(value, (1, value // 2)):
                yield _with_int_values(module, [node], target)


def _shrinkable_integers(module: cst.Module) -> list[cst.Integer]:
    # `-1` is a sentinel (view, dim) far more often than a size; shrinking its digit would only make it `-0`.
    negated = {id(op.expression) for op in find_all(module, m.UnaryOperation(operator=m.Minus(), expression=m.Integer()))}
    return [node for node in find_all(module, m.Integer()) if id(node) not in negated]


def _group_by_value(nodes: Sequence[cst.Integer]) -> dict[int, list[cst.Integer]]:
    groups: dict[int, list[cst.Integer]] = {}
    for node in nodes:
        groups.setdefault(node.evaluated_value, []).append(node)
    return groups


def _smaller_targets(value: int, targets: Sequence[int]) -> list[int]:
    """The targets below `value` and above 0, in the given order, without repeats."""
    return list(dict.fromkeys(t for t in targets if 0 < t < value))


def _with_int_values(module: cst.Module, nodes: Sequence[cst.Integer], value: int) -> cst.Module:
    return replace_nodes(module, {node: node.with_changes(value=str(value)) for node in nodes})


# Calls whose positional arguments, when there are several, are the dimensions of a shape: `torch.randn(2, 3)`,
# `x.view(2, 12)`. `randint` and `full` are absent on purpose: their positional ints are bounds and fill values.
_VARARG_SHAPE_CALLS = frozenset(
    {
        "randn", "rand", "zeros", "ones", "empty",
        "view", "reshape", "expand", "repeat", "tile", "new_zeros", "new_ones", "new_empty", "broadcast_to",
    }
)
# Calls where a tuple or list argument is a shape: the factories above plus those taking `size` first or later.
_SHAPE_CALLS = _VARARG_SHAPE_CALLS | {"randint", "full", "new_full", "empty_strided", "randn_like", "zeros_like"}
_SHAPE_KEYWORDS = frozenset({"size", "shape"})

# An integer literal, negative ones included (`-3` is a unary minus on `3`).
INTEGER_LITERAL = m.Integer() | m.UnaryOperation(operator=m.Minus(), expression=m.Integer())


def shrink_shapes(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with shapes given fewer dimensions.

    A shape is the positional arguments of a call like `torch.randn(2, 3, 4)` or `x.view(2, 12)`, a tuple or
    list passed to a shape-taking call (`torch.zeros((2, 3))`, `reshape([...])`, `size=(...)`), or any tuple or
    list of integer literals. Identical shapes first lose dimensions together; then each shape alone keeps only
    its last 1, 2, ... dimensions, then loses one dimension at a time, leading dimensions first. A shape keeps at
    least one dimension.
    """
    return distinct_candidates(module, _shape_candidates(module))


def _shape_candidates(module: cst.Module) -> Iterator[cst.Module]:
    shapes = _find_shapes(module)
    groups: dict[tuple[str, ...], list[list[cst.CSTNode]]] = {}
    for shape in shapes:
        groups.setdefault(_shape_key(module, shape), []).append(shape)
    for group in groups.values():
        if len(group) > 1:
            yield from _dropping_dimensions(module, group)
    for shape in shapes:
        yield from _dropping_dimensions(module, [shape])


def _dropping_dimensions(module: cst.Module, same_shapes: list[list[cst.CSTNode]]) -> Iterator[cst.Module]:
    """Candidates where every shape in `same_shapes` (all of one length) loses the same dimensions."""
    size = len(same_shapes[0])
    drops: list[Callable[[Sequence[cst.CSTNode]], list[cst.CSTNode]]] = []
    for keep in range(1, size):
        drops.append(lambda dims, keep=keep: list(dims[: len(dims) - keep]))
    for index in range(size):
        drops.append(lambda dims, index=index: [dims[index]])
    for dropped in drops:
        yield remove_nodes(module, [node for shape in same_shapes for node in dropped(shape)])


def _shape_key(module: cst.Module, shape: Sequence[cst.CSTNode]) -> tuple[str, ...]:
    return tuple(module.code_for_node(getattr(node, "value", node)).strip() for node in shape)


def _find_shapes(module: cst.Module) -> list[list[cst.CSTNode]]:
    """Each shape as the list of nodes to remove for dropping a dimension (`Arg` or `Element` nodes), in source
    order, each container once."""
    finder = _ShapeFinder()
    walk(module, finder)
    return [dims for dims in finder.shapes if len(dims) >= 2]


class _ShapeFinder(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.shapes: list[list[cst.CSTNode]] = []
        self._seen: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        name = _called_name(node.func)
        if name in _VARARG_SHAPE_CALLS:
            positional = [arg for arg in node.args if arg.keyword is None and arg.star == ""]
            if len(positional) >= 2:
                self.shapes.append(positional)
        for arg in node.args:
            is_shape_slot = (name in _SHAPE_CALLS and arg.keyword is None) or m.matches(
                arg.keyword, m.Name(m.MatchIfTrue(lambda n: n in _SHAPE_KEYWORDS))
            )
            if is_shape_slot and m.matches(arg.value, m.Tuple() | m.List()):
                self._add_sequence(arg.value, require_ints=False)

    def visit_Tuple(self, node: cst.Tuple) -> None:
        self._add_sequence(node, require_ints=True)

    def visit_List(self, node: cst.List) -> None:
        self._add_sequence(node, require_ints=True)

    def _add_sequence(self, node: cst.Tuple | cst.List, require_ints: bool) -> None:
        if id(node) in self._seen:
            return
        elements = list(node.elements)
        if any(m.matches(e, m.StarredElement()) for e in elements):
            return
        if require_ints and not all(m.matches(e.value, INTEGER_LITERAL) for e in elements):
            return
        self._seen.add(id(node))
        self.shapes.append(elements)


def _called_name(func: cst.BaseExpression) -> str | None:
    """`randn` for `torch.randn` or `randn`, `view` for `x.view`; None for anything else."""
    if m.matches(func, m.Name()):
        return func.value
    if m.matches(func, m.Attribute()):
        return func.attr.value
    return None
