"""A comprehension over one item is a list of that item: `nn.ModuleList(Block(c) for _ in range(1))` becomes
`nn.ModuleList([Block(c)])`, and `[model(b) for b in batches]` over `batches = [x]` becomes `model(batches)` with
`batches = x`.

Shrinking literals leaves `range(config.layers)` at `range(1)`, and deleting elements leaves a table of cases
at one case; the loop machinery then only hides that the model has one block or the evaluation one batch, and
keeps the other passes (and the statement of the bug) from seeing the call as a plain one.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node, replace_nodes
from minimizer.source.substitution import bind_names, variable_names
from minimizer.source.traversal import find_all, parent_map

__all__ = ["collapse_single_item_comprehensions", "loops_over_one_item", "one_item"]

_RANGE_OF_ONE = m.Call(func=m.Name("range"), args=[m.Arg(value=m.Integer("1"), keyword=None, star="")])
_ONE_LOOP = m.CompFor(target=m.Name(), ifs=[], inner_for_in=None, asynchronous=None)
_PLAIN_LOOP = m.CompFor(ifs=[], inner_for_in=None, asynchronous=None)


def collapse_single_item_comprehensions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one generator expression or list comprehension (one `for`, no `if`) over an iterable
    of one item replaced by a one-element list of its element with the loop's names bound to the item, in
    source order: `range(1)`, a one-item display, `zip` and `enumerate` of those
    (`[(o, r) for i, (o, r) in enumerate(zip([out], [ref]))]` -> `[(out, ref)]`); a dict comprehension over one
    item by the dict display of its one entry."""

    return distinct_candidates(module, _collapses(module))


def _collapses(module: cst.Module) -> Iterator[cst.Module | None]:
    for comprehension in find_all(module, m.GeneratorExp(for_in=_PLAIN_LOOP) | m.ListComp(for_in=_PLAIN_LOOP)):
        loop = comprehension.for_in  # type: ignore[union-attr]
        bound = _bindings(loop.target, one_item(loop.iter))
        elt = _bound_once(comprehension.elt, bound) if bound is not None else None  # type: ignore[union-attr]
        if elt is not None:
            yield lambda c=comprehension, e=elt: replace_node(module, c, cst.List(elements=[cst.Element(e)]))
    for comprehension in find_all(module, m.DictComp(for_in=_PLAIN_LOOP)):
        # `{name: f(o) for name, o in [("a", x)]}` -> `{"a": f(x)}`: a dict of metrics over one case.
        loop = comprehension.for_in  # type: ignore[attr-defined]
        bound = _bindings(loop.target, one_item(loop.iter))
        pair = cst.Tuple([cst.Element(comprehension.key), cst.Element(comprehension.value)])  # type: ignore[attr-defined]
        entry = _bound_once(pair, bound) if bound is not None else None
        if isinstance(entry, cst.Tuple):
            key, value = (element.value for element in entry.elements)
            yield lambda c=comprehension, k=key, v=value: replace_node(module, c, cst.Dict([cst.DictElement(k, v)]))


_DICT_VIEW = m.Call(func=m.Attribute(value=m.Dict(), attr=m.Name("items") | m.Name("keys") | m.Name("values")), args=[])


def _one_entry(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """The one item of a dict display of one entry, or of its `.items()`, `.keys()` or `.values()`."""

    display, view = (iterable.func.value, iterable.func.attr.value) if isinstance(iterable, cst.Call) else (iterable, "keys")  # type: ignore[attr-defined]
    entries = display.elements
    if len(entries) != 1 or not isinstance(entries[0], cst.DictElement):
        return None
    key, value = entries[0].key, entries[0].value
    return {"keys": key, "values": value, "items": cst.Tuple([cst.Element(key), cst.Element(value)])}[view]


_PRODUCT = m.Name("product") | m.Attribute(value=m.Name("itertools"), attr=m.Name("product"))


def one_item(iterable: cst.BaseExpression) -> cst.BaseExpression | None:
    """The one item of ``iterable`` as an expression, where it has exactly one: `[x]` or `(x,)` -> `x`,
    `range(1)` -> `0`, `zip(A, B)` or `itertools.product(A, B)` of such -> `(a, b)`, `enumerate(A)` -> `(0, a)`,
    `{k: v}.items()` -> `(k, v)` (and its keys and values); else None."""

    if isinstance(iterable, (cst.List, cst.Tuple)):
        elements = iterable.elements
        return elements[0].value if len(elements) == 1 and isinstance(elements[0], cst.Element) else None
    if isinstance(iterable, cst.Dict) or m.matches(iterable, _DICT_VIEW):
        return _one_entry(iterable)
    if m.matches(iterable, _RANGE_OF_ONE):
        return cst.Integer("0")
    if not isinstance(iterable, cst.Call) or not iterable.args or any(a.keyword or a.star for a in iterable.args):
        return None
    items = [one_item(a.value) for a in iterable.args]
    if None in items:
        return None
    if m.matches(iterable.func, m.Name("zip") | _PRODUCT):
        return cst.Tuple([cst.Element(item) for item in items])  # type: ignore[arg-type]
    if m.matches(iterable.func, m.Name("enumerate")) and len(items) == 1:
        return cst.Tuple([cst.Element(cst.Integer("0")), cst.Element(items[0])])  # type: ignore[arg-type]
    return None


def _bindings(target: cst.BaseExpression, item: cst.BaseExpression | None) -> dict[str, cst.BaseExpression] | None:
    """The names ``target`` binds to the parts of ``item`` (`i, (o, r)` over `(0, (a, b))`), or None where they
    do not line up."""

    if item is None:
        return None
    if isinstance(target, cst.Name):
        return {target.value: item}
    if not isinstance(target, (cst.Tuple, cst.List)) or not isinstance(item, cst.Tuple):
        return None
    if len(target.elements) != len(item.elements) or any(not isinstance(e, cst.Element) for e in (*target.elements, *item.elements)):
        return None
    bound: dict[str, cst.BaseExpression] = {}
    for part, value in zip(target.elements, item.elements):
        inner = _bindings(part.value, value.value)
        if inner is None or inner.keys() & bound.keys():
            return None
        bound |= inner
    return bound


def _bound_once(elt: cst.BaseExpression, bound: dict[str, cst.BaseExpression]) -> cst.BaseExpression | None:
    """``elt`` with the loop's names bound; None where an item that computes something would be computed twice."""

    reads = [name.value for name in variable_names(elt)]
    if any(reads.count(name) > 1 and not isinstance(value, (cst.Name, cst.Integer)) for name, value in bound.items()):
        return None
    return bind_names(elt, bound)


_ONE_ITEM_LIST_BINDING = m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.List(elements=[m.Element()]))


def loops_over_one_item(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with a module-level name bound to a one-item list (`batches = [x]`) bound to the item
    instead, where every read of the name is the iterable of a list comprehension of one `for` and no `if`:
    each becomes its element read with the name (`[f(b) for b in batches]` -> `f(batches)` as a statement,
    `[f(batches)]` elsewhere). One candidate per such name, in source order."""

    return distinct_candidates(module, _unrolled_loops(module))


def _unrolled_loops(module: cst.Module) -> Iterator[cst.Module | None]:
    parents = parent_map(module)
    for line in module.body:
        if not m.matches(line, m.SimpleStatementLine(body=[_ONE_ITEM_LIST_BINDING])):
            continue
        binding = line.body[0]  # type: ignore[attr-defined]
        name = binding.targets[0].target.value
        uses = [node for node in variable_names(module) if node.value == name and node is not binding.targets[0].target]
        replacements = _comprehensions_unrolled(uses, name, parents)
        if replacements:
            replacements[binding.value] = binding.value.elements[0].value
            yield lambda replacements=replacements: replace_nodes(module, replacements)


def _comprehensions_unrolled(uses: list[cst.Name], name: str, parents: dict) -> dict | None:
    """The comprehension each use iterates, unrolled; ``None`` where a use is anything else."""

    replacements: dict = {}
    for use in uses:
        loop, comprehension = parents.get(use), parents.get(parents.get(use))
        if not (m.matches(loop, _ONE_LOOP) and loop.iter is use and m.matches(comprehension, m.ListComp())):
            return None
        if comprehension.for_in is not loop:  # type: ignore[union-attr]
            return None
        element = bind_names(comprehension.elt, {loop.target.value: cst.Name(name)})  # type: ignore[union-attr]
        if element is None:
            return None
        alone = isinstance(parents.get(comprehension), cst.Expr) and not comprehension.lpar  # type: ignore[union-attr]
        replacements[comprehension] = element if alone else cst.List(elements=[cst.Element(element)])
    return replacements or None
