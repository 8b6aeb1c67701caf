"""A comprehension over one item is a list of that item: `nn.ModuleList(Block(c) for _ in range(1))` becomes
`nn.ModuleList([Block(c)])`.

Shrinking literals leaves `range(config.layers)` at `range(1)`; the loop machinery then only hides that the
model has one block, and keeps the other passes from seeing `Block(c)` as a plain construction.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, replace_node
from minimizer.source.traversal import find_all

__all__ = ["collapse_single_item_comprehensions"]

_RANGE_OF_ONE = m.Call(func=m.Name("range"), args=[m.Arg(value=m.Integer("1"), keyword=None, star="")])
_ONE_ITEM_LOOP = m.CompFor(iter=_RANGE_OF_ONE, target=m.Name(), ifs=[], inner_for_in=None, asynchronous=None)


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
