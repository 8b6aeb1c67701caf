"""Delete entries of dict, list and set displays: `{"attached": t.requires_grad, "mean": t.mean()}` loses
`"mean"`; pass a one-item list argument as its item.

Scripts return and log dictionaries of metrics and build lists of layers or checks; the bug needs one entry.
A tuple loses entries only where a loop goes over it (`for voice in (drone, lead)`, a comprehension's too,
through `enumerate`, or through the one name it is bound to: `CONFIGS = (a, b)` then `for c in CONFIGS`, a
config field `sizes: tuple = (8, 16)` then `for s in config.sizes`):
there each entry is one more run of the same body, and a loop left over one entry is its body (the unwrap of
compound statements). Elsewhere tuples are shapes (`shrink_shapes` takes those) and unpacked returns, whose
arity the caller depends on.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node, replace_nodes
from minimizer.source.substitution import as_operand
from minimizer.source.traversal import find_all, parent_map

__all__ = ["delete_collection_elements", "unwrap_single_item_list_arguments"]


def delete_collection_elements(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one entry of a dict, list or set display, or of a tuple a loop goes over, of two or
    more entries removed; displays in source order, each from its last entry to its first (a `**spread` or
    `*starred` entry too)."""

    return distinct_candidates(module, _deletions(module))


def _deletions(module: cst.Module) -> Iterator[cst.Module | None]:
    looped = _looped_tuples(module)
    for display in find_all(module, m.Dict() | m.List() | m.Set() | m.Tuple()):
        elements = list(display.elements)  # type: ignore[union-attr]
        if len(elements) < 2 or (isinstance(display, cst.Tuple) and id(display) not in looped):
            continue
        for index in reversed(range(len(elements))):
            kept = elements[:index] + elements[index + 1 :]
            yield lambda k=kept, d=display: replace_node(module, d, _with_elements(d, k))


def _looped_tuples(module: cst.Module) -> set[int]:
    """Ids of the tuple displays a loop goes over: its iterable itself, under `enumerate`, or what the name or
    attribute it iterates is bound to, where that name has one binding (`CONFIGS = (a, b)`, a dataclass field
    `sizes: tuple = (8, 16)` read as `config.sizes`, `self.sizes = ...`, a default `sizes=(8, 16)`, a keyword
    `Config(sizes=(8, 16))`)."""

    bound = _bindings_by_name(module)
    looped = set()
    for loop in find_all(module, m.For() | m.CompFor()):
        iterable = loop.iter  # type: ignore[union-attr]
        if m.matches(iterable, m.Call(func=m.Name("enumerate"), args=[m.Arg(keyword=None), m.ZeroOrMore()])):
            iterable = iterable.args[0].value  # type: ignore[union-attr]
        name = _bound_name(iterable)
        if name is not None and len(bound.get(name, [])) == 1:
            iterable = bound[name][0]
        if isinstance(iterable, cst.Tuple):
            looped.add(id(iterable))
    return looped


def _bound_name(target: cst.BaseExpression) -> str | None:
    """The name a binding or a read goes by: `x` for `x`, `sizes` for `config.sizes` and `self.sizes`."""
    if isinstance(target, cst.Name):
        return target.value
    if isinstance(target, cst.Attribute):
        return target.attr.value
    return None


def _bindings_by_name(module: cst.Module) -> dict[str, list[cst.BaseExpression]]:
    """Every value bound to a name anywhere in `module`, by the name: assignments (annotated too), parameter
    defaults and keyword arguments. Scope-blind on purpose: a tuple counts as looped over only where its name
    has one binding in the whole file."""

    bound: dict[str, list[cst.BaseExpression]] = {}
    for node in find_all(module, m.Assign() | m.AnnAssign() | m.Param() | m.Arg(keyword=m.Name())):
        if isinstance(node, cst.Assign):
            pairs = [(target.target, node.value) for target in node.targets]
        elif isinstance(node, cst.AnnAssign):
            pairs = [(node.target, node.value)]
        elif isinstance(node, cst.Param):
            pairs = [(node.name, node.default)]
        else:
            pairs = [(node.keyword, node.value)]  # type: ignore[union-attr]
        for target, value in pairs:
            name = _bound_name(target)
            if name is not None and value is not None:
                bound.setdefault(name, []).append(value)
    return bound


def _with_elements(display: cst.BaseExpression, kept: list) -> cst.BaseExpression:
    """``display`` holding ``kept``, with no dangling comma; a looped-over tuple left with one entry becomes a
    one-item list (`for key in "a", "b"` -> `for key in ["a"]`: not a loop over the letters of "a", and no
    larger than the tuple was)."""

    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    if isinstance(display, cst.Tuple) and len(kept) == 1:
        return cst.List(elements=kept)
    return display.with_changes(elements=kept)


def unwrap_single_item_list_arguments(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one call argument that is a one-item list replaced by the item, in source order:
    `torch.autograd.grad(outputs=[loss], inputs=[z])` -> `torch.autograd.grad(outputs=loss, inputs=[z])`. Many
    APIs take a tensor or a sequence of them; where one does not, the candidate fails and is dropped. A one-item
    list or tuple unpacked into the call is its item, passed as is: `nn.Sequential(*[block])` ->
    `nn.Sequential(block)` (the same call); a longer one is its items: `f(x, *[w, b])` -> `f(x, w, b)`. A
    one-item list bound to a name only ever unpacked into calls is its item (`inputs = [x]`, `f(*inputs)` ->
    `inputs = x`, `f(inputs)`). Where a truth is tested (an assert, an `if`, `not`, `and`), `all([c])` and
    `any([c])` are `c`: the truth of their one item."""

    return distinct_candidates(module, _unwrappings(module))


def _unwrappings(module: cst.Module) -> Iterator[cst.Module | None]:
    single = m.Arg(value=m.List(elements=[m.Element()]), star="")
    unpacked = m.Arg(value=(m.List | m.Tuple)(elements=[m.Element()]), star="*")
    for arg in find_all(module, single | unpacked):
        item = arg.value.elements[0].value  # type: ignore[union-attr]
        yield lambda a=arg, i=item: replace_node(module, a, a.with_changes(value=i, star=""))
    spread = m.Arg(value=(m.List | m.Tuple)(elements=[m.Element(), m.Element(), m.ZeroOrMore(m.Element())]), star="*")
    for call in find_all(module, m.Call(args=[m.ZeroOrMore(), spread, m.ZeroOrMore()])):
        yield lambda c=call: replace_node(module, c, c.with_changes(args=_spread(c.args)))  # type: ignore[attr-defined]
    yield from _named_single_items(module)
    yield from _truths_of_one_item(module)


_ALL_OF_ONE = m.Call(func=m.Name("all") | m.Name("any"), args=[m.Arg(value=(m.List | m.Tuple)(elements=[m.Element()]), star="")])


def _truths_of_one_item(module: cst.Module) -> Iterator[cst.Module | None]:
    """`assert all([c])` -> `assert c`, where only the call's truth is read (not its value: `ok = all([c])` is
    a bool where `c` may be a tensor)."""

    parents = parent_map(module)
    for call in find_all(module, _ALL_OF_ONE):
        parent = parents.get(call)
        operand = isinstance(parent, cst.BooleanOperation) or m.matches(parent, m.UnaryOperation(operator=m.Not()))
        if operand or (isinstance(parent, (cst.Assert, cst.If, cst.While, cst.IfExp)) and parent.test is call):
            item = call.args[0].value.elements[0].value  # type: ignore[attr-defined]
            yield lambda c=call, i=(as_operand(item) if operand else item): replace_node(module, c, i)


_ONE_ITEM_NAMED = m.SimpleStatementLine(
    body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=(m.List | m.Tuple)(elements=[m.Element()]))]
)


def _named_single_items(module: cst.Module) -> Iterator[cst.Module | None]:
    """A one-item list bound to a name that is only ever passed to calls, unpacked or not (``inputs = [x]`` then
    ``f(*inputs)``, as the graph lift writes it; ``widths = [1]`` then ``torch.ones(widths)``): the name bound to
    the item, passed as is (``inputs = x``, ``f(inputs)``; ``widths = 1``, which a literal's inlining then
    writes in place)."""

    parents = parent_map(module)
    for statement in module.body:
        if not m.matches(statement, _ONE_ITEM_NAMED):
            continue
        assign = statement.body[0]  # type: ignore[attr-defined]
        name = assign.targets[0].target.value
        uses = [n for n in find_all(module, m.Name(name)) if n is not assign.targets[0].target]
        arguments = [parents.get(n) for n in uses]
        if not uses or any(not isinstance(a, cst.Arg) or a.value is not use for a, use in zip(arguments, uses)):
            continue
        replacements = {arg: arg.with_changes(star="") for arg in arguments if arg.star == "*"}
        replacements[assign] = assign.with_changes(value=assign.value.elements[0].value)
        yield lambda r=replacements: replace_nodes(module, r)


def _spread(args: Sequence[cst.Arg]) -> list[cst.Arg]:
    """``args`` with each list or tuple display unpacked into the call (`*[w, b]`) written as its items."""

    spread: list[cst.Arg] = []
    for index, arg in enumerate(args):
        items = arg.value.elements if arg.star == "*" and isinstance(arg.value, (cst.List, cst.Tuple)) else None
        if items is None or any(not isinstance(item, cst.Element) for item in items):
            spread.append(arg)
            continue
        last = index == len(args) - 1
        spread += [cst.Arg(item.value) for item in items[:-1]]
        spread.append(cst.Arg(items[-1].value, comma=arg.comma if not last else cst.MaybeSentinel.DEFAULT))
    return spread
