"""Random inputs made fixed: `torch.randn(2, 3)` becomes `torch.ones(2, 3)`, or `torch.randn(4)` `torch.arange(4.0)`.

A script draws its inputs at random by habit; most bugs show on ones as well, and a bug that reads the wrong
element (an index, a row, a stride) shows on a count, whose elements all differ. A repro that draws nothing
needs no seed line to fail the same way on every run, and its numbers are the same on every machine.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.traversal import find_all

__all__ = ["random_inputs_to_ones"]

_FIXED = {"randn": "ones", "rand": "ones", "randn_like": "ones_like", "rand_like": "ones_like"}
_RANDOM_FACTORY = m.Call(
    func=m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(lambda name: name in _FIXED)))
)


def random_inputs_to_ones(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with `torch.randn` / `torch.rand` (and their `_like` forms) calling `torch.ones` (`ones_like`):
    all at once, then each alone in source order; then each one-dimensional draw of a literal length counting
    (`torch.randn(4, requires_grad=True)` -> `torch.arange(4.0, requires_grad=True)`, the default float dtype as
    the draw's). Calls given a `generator=` are left alone (`ones` takes none).
    """

    sites = [
        call for call in find_all(module, _RANDOM_FACTORY)
        if not any(arg.keyword is not None and arg.keyword.value == "generator" for arg in call.args)
    ]
    groups = ([sites] if len(sites) > 1 else []) + [[site] for site in sites]
    counted = [call for call in sites if m.matches(call, _ONE_DIMENSION)]
    return distinct_candidates(module, [
        *(lambda group=group: _fixed(module, group) for group in groups),
        *(lambda call=call: replace_nodes(module, {call: _counting(call)}) for call in counted),
    ])


def _fixed(module: cst.Module, calls: list[cst.Call]) -> cst.Module:
    return replace_nodes(
        module, {call: call.with_changes(func=call.func.with_changes(attr=cst.Name(_FIXED[call.func.attr.value]))) for call in calls}
    )


# `torch.randn(4, ...)`: one positional argument, an integer literal, the rest keywords.
_ONE_DIMENSION = m.Call(
    func=m.Attribute(attr=m.Name("randn") | m.Name("rand")),
    args=[m.Arg(value=m.Integer(), keyword=None), m.ZeroOrMore(m.Arg(keyword=m.Name()))],
)


def _counting(call: cst.Call) -> cst.Call:
    length = call.args[0].with_changes(value=cst.Float(f"{int(call.args[0].value.value)}.0"))
    return call.with_changes(func=call.func.with_changes(attr=cst.Name("arange")), args=[length, *call.args[1:]])
