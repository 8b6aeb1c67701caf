"""Asserts shrunk: one that only wraps the call that fails becomes that call, one that is the bug loses its message.

`assert model == outcome(opt, x), "msg"` becomes `outcome(opt, x)`: where the bug is a crash, or shows before
the assert compares anything, the comparison and its message are words around the call; kept, they also hold the
helper's call inside an expression, where it cannot be inlined. Where the assert is the bug (the script's own
check), the candidate passes and is dropped; a message it computes may go instead (`f"{name}: outputs differ"`,
with the names only the message read), where the signature does not hold the message (a recorded comparison
names the check; without one, the message is the check's name and a candidate without it fails otherwise).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import children, find_all

__all__ = ["asserts_to_their_calls", "drop_assert_messages"]


def asserts_to_their_calls(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `assert` statement replaced by one of the outermost calls in its test, as an
    expression statement; asserts and calls in source order. An assert holding no call is left alone."""

    return distinct_candidates(module, _replacements(module))


def drop_assert_messages(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `assert`'s computed message removed (`f"{name}: outputs differ"`), in source order.
    A literal message stays: it costs the reader nothing, and plain python then fails with the original's words."""

    with_messages = [a for a in find_all(module, m.Assert()) if a.msg is not None and not _literal(a.msg)]  # type: ignore[attr-defined]
    return distinct_candidates(
        module, (lambda a=a: replace_node(module, a, a.with_changes(msg=None, comma=cst.MaybeSentinel.DEFAULT)) for a in with_messages)
    )


def _literal(message: cst.BaseExpression) -> bool:
    return isinstance(message, cst.SimpleString) or (
        isinstance(message, cst.ConcatenatedString) and _literal(message.left) and _literal(message.right)
    )


def _replacements(module: cst.Module) -> Iterator[object]:
    for assertion in find_all(module, m.Assert()):
        for call in _outermost_calls(assertion.test):  # type: ignore[attr-defined]
            yield lambda a=assertion, c=call: replace_node(module, a, cst.Expr(c))


def _outermost_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    if isinstance(node, cst.Call):
        yield node
    elif not isinstance(node, (cst.Lambda, cst.BaseComp)):
        for child in children(node):
            yield from _outermost_calls(child)
