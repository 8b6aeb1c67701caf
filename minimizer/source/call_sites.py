"""Where a module-level function is called, and what every call gives one of its parameters.

A function lifted out of a script is called once at module level, often through the compile that wraps it
(`torch.compile(f, backend=...)(Cfg(), x)`): passes that read what a parameter always receives (a fresh config, a
fresh layer) need its call sites, however it is compiled at the call.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import TORCH_COMPILE
from minimizer.source.traversal import find_all

__all__ = ["calls_of", "parameters_given"]


def calls_of(module: cst.Module, function: cst.FunctionDef) -> list[cst.Call] | None:
    """The calls of module-level ``function``, direct or compiled at once (`torch.compile(f, ...)(...)`); ``None``
    where its name is read anywhere else (passed on, stored, rebound)."""

    own = function.name.value
    callee = m.Name(own) | m.Call(func=TORCH_COMPILE, args=[m.Arg(value=m.Name(own), keyword=None), m.ZeroOrMore()])
    calls = find_all(module, m.Call(func=callee))
    if not calls or len(find_all(module, m.Name(own))) != len(calls) + 1:  # the definition's own name
        return None
    return calls


def parameters_given(module: cst.Module, given: m.BaseMatcherNode) -> list[tuple[cst.FunctionDef, int, list[cst.Call]]]:
    """(function, parameter's place, calls) for each module-level function called only (see ``calls_of``) whose
    every call gives a positional argument matching ``given`` in that parameter's place (a method lifted out of its
    class keeps `self`, which every call gives a fresh instance)."""

    found = []
    for function in module.body:
        if not isinstance(function, cst.FunctionDef):
            continue
        calls = calls_of(module, function)
        if calls is None:
            continue
        for place, _ in enumerate(function.params.params):
            args = [call.args[place] if len(call.args) > place else None for call in calls]
            if all(a is not None and not a.star and a.keyword is None and m.matches(a.value, given) for a in args):
                found.append((function, place, calls))
    return found
