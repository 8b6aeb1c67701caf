"""Tuple assignments that bind several names in one line, one line per name: `a, b = x, y` -> `a = x` then `b = y`.

A script's `eager, compiled = model(x), opt(x)` keeps the unused half alive as long as the other half is needed;
written a line per name, what each binds can go on its own (the dead-code and single-use passes take it).
"""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all

__all__ = ["split_tuple_assignments"]


def split_tuple_assignments(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `a, b = x, y` written as `a = x` then `b = y`, in source order; `a, = [x]` becomes
    `a = x`.

    Only where both sides are tuples or lists of the same length without starred elements, every target is a plain name,
    and no value reads a name bound before it in that order (`a, b = b, a` swaps; it stays). A half that binds a
    name to itself (`a, b = a, y`) goes. Then what each half binds can go on its own. Where splitting adds tokens
    (three names or more in one line take fewer than one line each), each pair is also proposed gone from both
    sides at once (`name, out = f"{s}", f(x)` -> `out = f(x)`): a name the rest still reads fails the run.
    """

    return distinct_candidates(module, _splits(module))


def _starred_rest(line: cst.SimpleStatementLine, targets: Sequence, values: Sequence) -> list | None:
    """`name, out, ref = "eval", *evaluate(x)` as `name = "eval"` then `out, ref = evaluate(x)`: the items before
    the one starred last, each bound on its own line, and the names left unpacking what it unpacks. ``None`` where
    the value is not so, a target is no plain name, or the starred value reads a name bound before it."""

    *leading, last = values
    # One name left would take the list the star makes (`b = [*f()]`), which is no smaller.
    if not leading or not isinstance(last, cst.StarredElement) or len(targets) - len(leading) < 2:
        return None
    if not all(isinstance(v, cst.Element) for v in leading) or not all(
        isinstance(t, cst.Element) and isinstance(t.value, cst.Name) for t in targets
    ):
        return None
    if any(n.value in {t.value.value for t in targets[: len(leading)]} for n in m.findall(last.value, m.Name())):
        return None
    assign = line.body[0]

    def bound(target: cst.BaseAssignTargetExpression, value: cst.BaseExpression) -> cst.SimpleStatementLine:
        return line.with_changes(body=[assign.with_changes(targets=[cst.AssignTarget(target=target)], value=value)])

    rest = [*targets[len(leading):-1], targets[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)]
    return [*(bound(t.value, v.value) for t, v in zip(targets, leading)), bound(cst.Tuple(rest, lpar=[], rpar=[]), last.value)]


def _splits(module: cst.Module) -> Iterator[cst.Module | None]:
    unpacking = m.Assign(targets=[m.AssignTarget(target=m.Tuple() | m.List())])
    for line in find_all(module, m.SimpleStatementLine(body=[unpacking])):
        assign = line.body[0]  # type: ignore[attr-defined]
        targets = assign.targets[0].target.elements
        values = assign.value.elements if isinstance(assign.value, (cst.Tuple, cst.List)) else None
        if values is not None and (rest := _starred_rest(line, targets, values)) is not None:
            yield lambda line=line, rest=rest: replace_node(module, line, cst.FlattenSentinel(rest))
            continue
        if values is None or len(values) != len(targets):
            continue
        if len(targets) == 1 and isinstance(values[0], cst.Element) and isinstance(targets[0], cst.Element):
            # `(name, out), = [pair]`: the one item, whatever its target unpacks it to
            single = cst.Assign(targets=[cst.AssignTarget(target=targets[0].value)], value=values[0].value)
            yield lambda line=line, single=single: replace_node(module, line, line.with_changes(body=[single]))
            continue
        if not all(isinstance(t, cst.Element) and isinstance(t.value, cst.Name) for t in targets):
            continue
        if not all(isinstance(v, cst.Element) for v in values):
            continue
        names = [t.value.value for t in targets]
        # One after another, a value must not read a name bound before it (`a, b = b, a` swaps); its own is fine.
        if any(n.value in names[:j] for j, v in enumerate(values) for n in m.findall(v.value, m.Name())):
            continue
        lines = [
            line.with_changes(body=[cst.Assign(targets=[cst.AssignTarget(target=t.value)], value=v.value)])
            for t, v in zip(targets, values)
            if not (isinstance(v.value, cst.Name) and v.value.value == t.value.value)  # `a = a` binds nothing new
        ]
        if not lines:
            continue
        yield lambda line=line, lines=lines: replace_node(module, line, cst.FlattenSentinel(lines))
        for position in range(len(targets) if len(targets) > 2 else 0):
            kept = [(t, v) for index, (t, v) in enumerate(zip(targets, values)) if index != position]
            yield lambda line=line, kept=kept: replace_node(module, line, line.with_changes(body=[_paired(kept)]))


def _paired(pairs: list) -> cst.Assign:
    """``a, b = x, y`` of the (target, value) elements ``pairs``; ``a = x`` for one."""

    if len(pairs) == 1:
        return cst.Assign(targets=[cst.AssignTarget(target=pairs[0][0].value)], value=pairs[0][1].value)
    last = len(pairs) - 1
    targets = [t.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else t.comma) for i, (t, _) in enumerate(pairs)]
    values = [v.with_changes(comma=cst.MaybeSentinel.DEFAULT if i == last else v.comma) for i, (_, v) in enumerate(pairs)]
    return cst.Assign(targets=[cst.AssignTarget(target=cst.Tuple(targets, lpar=[], rpar=[]))], value=cst.Tuple(values, lpar=[], rpar=[]))
