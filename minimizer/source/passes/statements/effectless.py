"""Statements a reduction leaves that do nothing: a bare `x`, `pass` beside other statements, a loop that does nothing.

Bypassing an operator turns `x = block(x)` into `x`, and deleting a loop's work leaves `for block in blocks: x`.
Statement ddmin finds each of these only one chunk at a time, after hundreds of proposals on a large script; this
pass names them directly.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates, try_build
from minimizer.source.passes.edit import remove_nodes
from minimizer.source.rendering import code_of
from minimizer.source.traversal import nodes_of_type

__all__ = ["remove_effectless_statements"]

# An expression statement of one of these does nothing but read a name (a docstring, a leftover `x`, `self.x`).
_EFFECTLESS_VALUE = m.Name() | m.Attribute(value=m.Name()) | m.BaseString() | m.Integer() | m.Float() | m.Ellipsis()


def remove_effectless_statements(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` without its statements that do nothing: all of them at once, then each alone.

    A statement does nothing when it is an expression statement of a name, a `name.attribute`, or a constant, or a
    `pass` in a block that has other statements; a `for` loop does nothing when its body (and `else`) does nothing
    and it iterates over a name or attribute (so no call runs for it).
    """

    found = [node for node in _effectless(module)]
    if not found:
        return iter(())
    singles = (lambda node=node: remove_nodes(module, [node]) for node in found)
    both = [try_build(lambda: remove_nodes(module, found))] if len(found) > 1 else []
    return distinct_candidates(module, iter([*both, *singles]))


def statements_left_idle(before: cst.Module, after: cst.Module) -> list[cst.CSTNode]:
    """The statements of ``after`` that do nothing and are not in ``before`` (a bypass that turned
    `router.eval()` into `router`): the reducer's follow-up removes them right after the step."""

    was_idle = {code_of(before, node) for node in _effectless(before)}
    return [node for node in _effectless(after) if code_of(after, node) not in was_idle]


def _effectless(module: cst.Module) -> list[cst.CSTNode]:
    found: list[cst.CSTNode] = []
    for line in nodes_of_type(module, cst.SimpleStatementLine):
        if all(_does_nothing(small) for small in line.body):
            found.append(line)
    iterated = m.Name() | m.Attribute(value=m.Name())
    for loop in (f for f in nodes_of_type(module, cst.For) if m.matches(f.iter, iterated)):
        blocks = [loop.body, *([loop.orelse.body] if loop.orelse else [])]  # type: ignore[attr-defined]
        if all(_block_does_nothing(block) for block in blocks):
            found.append(loop)
    # A loop found both ways is removed once: drop the statements inside a loop that goes anyway.
    loops = [node for node in found if isinstance(node, cst.For)]
    inner = {n for loop in loops for n in m.findall(loop, m.SimpleStatementLine())}
    return [node for node in found if node not in inner]


def _does_nothing(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, cst.Pass):
        return True
    return isinstance(small, cst.Expr) and m.matches(small.value, _EFFECTLESS_VALUE)


def _block_does_nothing(block: cst.BaseSuite) -> bool:
    if isinstance(block, cst.SimpleStatementSuite):
        return all(_does_nothing(small) for small in block.body)
    return all(
        isinstance(statement, cst.SimpleStatementLine) and all(_does_nothing(s) for s in statement.body)
        for statement in block.body  # type: ignore[attr-defined]
    )
