"""An item a loop unpacks and never reads goes from the loop and from every tuple it is unpacked from:
`for name, out, ref in pairs:` over `pairs.append((case.name, run(x), ref))` -> `for out, ref in pairs:` over
`pairs.append((run(x), ref))`; and one an assignment unpacks, from both sides: `name, out, ref = "eval",
*evaluate(x)` -> `out, ref = evaluate(x)`.

A table of cases carries a label per row for the person who reads the failures; once the message that printed
it is gone, the label is computed and unpacked for nothing, and neither the tuple nor the loop can lose it alone
(the arities must agree).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.traversal import find_all, names_of

__all__ = ["drop_unread_assigned_items", "drop_unread_loop_items", "without_item"]

_APPEND = m.Call(func=m.Attribute(value=m.Name(), attr=m.Name("append")), args=[m.Arg(value=m.Tuple(), keyword=None)])


def drop_unread_loop_items(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one name of a `for` loop's tuple target that nothing else in the module names removed,
    with the item at its place from every tuple the loop iterates: the tuples of a list or tuple display it
    loops over, the tuple a comprehension it loops over makes, or those of a name's display and its
    `.append((...))` calls where nothing else uses the name."""

    return distinct_candidates(module, _drops(module))


def _drops(module: cst.Module) -> Iterator:
    for loop in find_all(module, m.For(target=m.Tuple(elements=[m.AtLeastN(m.Element(value=m.Name()), n=2)]))):
        rows = _rows(module, loop)
        arity = len(loop.target.elements)
        if rows is None or any(len(row.elements) != arity or any(isinstance(e, cst.StarredElement) for e in row.elements) for row in rows):
            continue
        for position, element in enumerate(loop.target.elements):
            if names_of(module, element.value.value) == 1:  # the target alone names it
                yield lambda p=position, loop=loop, rows=rows: replace_nodes(
                    module, {loop.target: without_item(loop.target, p), **{row: without_item(row, p) for row in rows}}
                )


def drop_unread_assigned_items(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one name of an assignment's tuple target that nothing else in the module names
    removed, with the value's item at its place, where the value unpacks a starred item after it (which takes what
    is left); `names.tuples.split_tuple_assignments` takes the pairs of displays without one."""

    return distinct_candidates(module, _assigned_drops(module))


def _assigned_drops(module: cst.Module) -> Iterator:
    unpacking = m.Assign(targets=[m.AssignTarget(target=m.Tuple(elements=[m.AtLeastN(m.Element(value=m.Name()), n=2)]))], value=m.Tuple())
    for assign in find_all(module, unpacking):
        target, value = assign.targets[0].target, assign.value
        starred = [i for i, e in enumerate(value.elements) if isinstance(e, cst.StarredElement)]
        if any(not isinstance(e.value, cst.Name) for e in target.elements):
            continue
        if not starred or len(target.elements) == 2:
            continue  # no starred item (split_tuple_assignments), or one name would be left to take all it unpacks
        aligned = starred[0]
        for position, element in enumerate(target.elements[:aligned]):
            if names_of(module, element.value.value) == 1:
                edits = {target: without_item(target, position), value: without_item(value, position)}
                yield lambda edits=edits: replace_nodes(module, edits)


def _rows(module: cst.Module, loop: cst.For) -> list[cst.Tuple] | None:
    """The tuple displays ``loop`` unpacks, or ``None`` where it may unpack anything else."""

    if isinstance(loop.iter, (cst.List, cst.Tuple)):
        return _tuples(loop.iter)
    if isinstance(loop.iter, (cst.ListComp, cst.GeneratorExp)):  # `[(f"batch{i}", o, r) for i, (o, r) in ...]`
        return [loop.iter.elt] if isinstance(loop.iter.elt, cst.Tuple) else None
    if not isinstance(loop.iter, cst.Name):
        return None
    name = loop.iter.value
    uses = names_of(module, name)
    displays = [a.value for a in find_all(module, m.Assign(targets=[m.AssignTarget(target=m.Name(name))]))]
    appended = [c for c in find_all(module, _APPEND) if c.func.value.value == name]
    # Each use: the loop's, an assignment's target, or an append's receiver; nothing else reads the rows.
    if len(displays) != 1 or uses != 2 + len(appended) or not isinstance(displays[0], cst.List):
        return None
    rows = _tuples(displays[0])
    return None if rows is None else rows + [c.args[0].value for c in appended]


def _tuples(display: cst.List | cst.Tuple) -> list[cst.Tuple] | None:
    rows = [e.value for e in display.elements]
    return rows if all(isinstance(r, cst.Tuple) for r in rows) else None


def without_item(row: cst.Tuple, position: int) -> cst.BaseExpression:
    """``row`` without its item at ``position``; the item left alone where one is left (`(a, b)` -> `b`)."""

    kept = [e for i, e in enumerate(row.elements) if i != position]
    if len(kept) == 1:
        return kept[0].value
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return row.with_changes(elements=kept)
