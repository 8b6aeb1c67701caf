"""Call a partial's function directly: `functools.partial(scaled_call, model, 0.5)(x)` becomes
`scaled_call(model, 0.5, x)`.

A partial bound to a name and called once becomes this shape once the name is inlined; called at once, the
partial is one more level to read, and the function it wraps is then called plainly, where the passes that
inline single calls reach it.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.traversal import find_all

__all__ = ["partial_calls_to_calls"]

_PARTIAL = m.Attribute(value=m.Name("functools"), attr=m.Name("partial")) | m.Name("partial")


def partial_calls_to_calls(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one call of a `functools.partial(f, ...)` made on the spot turned into the call of `f`
    with the partial's arguments first (its keywords before the call's, as `partial` merges them), in source
    order. A partial with no function or a starred first argument is left."""

    return distinct_candidates(module, (lambda c=call: _direct(module, c) for call in _partial_calls(module)))


def _partial_calls(module: cst.Module) -> list[cst.Call]:
    return [
        call for call in find_all(module, m.Call(func=m.Call(func=_PARTIAL)))
        if call.func.args and not call.func.args[0].star and call.func.args[0].keyword is None  # type: ignore[attr-defined]
    ]


def _direct(module: cst.Module, call: cst.Call) -> cst.Module | None:
    partial: cst.Call = call.func  # type: ignore[assignment]
    function, *bound = partial.args
    given = list(call.args)
    later_keywords = {arg.keyword.value for arg in given if arg.keyword is not None}
    if any(arg.keyword is not None and arg.keyword.value in later_keywords for arg in bound):
        return None  # the call overrides a keyword the partial bound: merged by name, not written twice
    positional = [a for a in [*bound, *given] if a.keyword is None and a.star != "**"]
    keywords = [a for a in [*bound, *given] if a.keyword is not None or a.star == "**"]
    args = [arg.with_changes(comma=cst.MaybeSentinel.DEFAULT) for arg in [*positional, *keywords]]
    return replace_nodes(module, {call: call.with_changes(func=function.value, args=args)})
