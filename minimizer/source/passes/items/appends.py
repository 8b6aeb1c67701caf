"""A list built by appending one item is a list display of that item: `pairs = []` ... `pairs.append(x)` becomes
`pairs = [x]` where the append was.

Scripts collect results in a loop (`pairs.append((name, out, ref))`) and check them in another; once the loop is
down to its one iteration, the empty list and its append only hide that the check reads one value. As a display,
the list's one-item loop unwraps (`(name, out, ref), = [...]`) and the tuple splits into plain names.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_node, replace_node
from minimizer.source.traversal import find_all

__all__ = ["appended_lists_to_displays"]

_EMPTY_LIST = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.List(elements=[]))])


def appended_lists_to_displays(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one list bound empty (`name = []`) and appended to exactly once afterwards, in the same
    block (`name.append(x)` as a statement), bound to `[x]` at the append instead; one candidate per such list, in
    source order. Not where the name is read between the two, or touched by anything but that one append."""

    return distinct_candidates(module, _displays(module))


def _displays(module: cst.Module) -> Iterator[cst.Module | None]:
    for block in _blocks(module):
        for index, line in enumerate(block):
            if not m.matches(line, _EMPTY_LIST):
                continue
            name = line.body[0].targets[0].target.value  # type: ignore[attr-defined]
            append = _the_one_append(block[index + 1:], name)
            if append is not None:
                display = cst.Assign(
                    targets=[cst.AssignTarget(cst.Name(name))],
                    value=cst.List([cst.Element(append.body[0].value.args[0].value)]),  # type: ignore[attr-defined]
                )
                yield lambda line=line, append=append, display=display: replace_node(
                    remove_node(module, line), append, append.with_changes(body=[display])
                )


def _blocks(module: cst.Module) -> Iterator[Sequence[cst.BaseStatement]]:
    yield module.body
    for block in find_all(module, m.IndentedBlock()):
        yield block.body  # type: ignore[attr-defined]


def _the_one_append(after: Sequence[cst.BaseStatement], name: str) -> cst.SimpleStatementLine | None:
    """The statement of ``after`` that is ``name.append(x)``, where every earlier statement leaves ``name`` alone
    and no later one appends or binds it again; ``None`` otherwise."""

    appends = m.SimpleStatementLine(body=[m.Expr(m.Call(
        func=m.Attribute(value=m.Name(name), attr=m.Name("append")), args=[m.Arg(keyword=None, star="")]
    ))])  # fmt: skip
    for index, statement in enumerate(after):
        if m.matches(statement, appends):
            rest = after[index + 1:]
            touched_again = any(
                m.findall(s, m.Attribute(value=m.Name(name), attr=m.Name())) or m.findall(s, m.AssignTarget(m.Name(name)))
                for s in rest
            )
            return None if touched_again else statement  # type: ignore[return-value]
        if m.findall(statement, m.Name(name)):
            return None
    return None
