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

from minimizer.source.cst_utils import bind_names, distinct_candidates, replace_node, replace_nodes, variable_names
from minimizer.source.traversal import find_all, parent_map

__all__ = ["collapse_single_item_comprehensions", "loops_over_one_item"]

_RANGE_OF_ONE = m.Call(func=m.Name("range"), args=[m.Arg(value=m.Integer("1"), keyword=None, star="")])
_ONE_LOOP = m.CompFor(target=m.Name(), ifs=[], inner_for_in=None, asynchronous=None)
_ONE_ITEM_LOOP = m.CompFor(iter=_RANGE_OF_ONE) & _ONE_LOOP


def collapse_single_item_comprehensions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one generator expression or list comprehension over `range(1)` (one `for`, no `if`,
    its variable unread) replaced by a one-element list, in source order."""

    return distinct_candidates(module, _collapses(module))


def _collapses(module: cst.Module) -> Iterator[cst.Module | None]:
    for comprehension in find_all(module, m.GeneratorExp(for_in=_ONE_ITEM_LOOP) | m.ListComp(for_in=_ONE_ITEM_LOOP)):
        variable = comprehension.for_in.target.value  # type: ignore[union-attr]
        if m.findall(comprehension.elt, m.Name(variable)):  # type: ignore[union-attr]
            continue
        single = cst.List(elements=[cst.Element(comprehension.elt)])  # type: ignore[union-attr]
        yield lambda c=comprehension, s=single: replace_node(module, c, s)


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
