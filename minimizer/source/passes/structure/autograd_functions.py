"""A custom `torch.autograd.Function` left with only a `forward` that ignores `ctx` is a plain function:
`FusedCrossEntropy.apply(logits, targets)` becomes `fused_cross_entropy(logits, targets)`.

Once the reduction has removed the `backward` (the bug shows in the forward: a kernel writing in place, an
op that fails to trace), the class, `@staticmethod`, `ctx` and `.apply` are ceremony around one call.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import metadata
from minimizer.source.passes.structure.bodies import DOCSTRING_LINE
from minimizer.source.passes.structure.modules import snake_case
from minimizer.source.traversal import parent_map

__all__ = ["autograd_functions_to_functions"]

_FUNCTION_BASE = m.Arg(value=m.Attribute(value=m.Attribute(value=m.Name("torch"), attr=m.Name("autograd")), attr=m.Name("Function")))
_STATIC = m.Decorator(decorator=m.Name("staticmethod"))


def autograd_functions_to_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield one candidate per module-level `class C(torch.autograd.Function)` whose body is only a
    `@staticmethod forward(ctx, ...)` that never reads `ctx`, and whose every use is `C.apply(...)`."""

    return distinct_candidates(module, _conversions(module))


def _conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    wrapper = metadata(module)
    scopes, parents = wrapper.resolve(ScopeProvider), parent_map(wrapper.module)
    global_scope = scopes[module]
    for cls in module.body:
        if not m.matches(cls, m.ClassDef(bases=[_FUNCTION_BASE], decorators=[])):
            continue
        members = [item for item in cls.body.body if not m.matches(item, DOCSTRING_LINE)]  # type: ignore[attr-defined]
        if len(members) != 1 or not m.matches(members[0], m.FunctionDef(name=m.Name("forward"), decorators=[_STATIC])):
            continue
        forward: cst.FunctionDef = members[0]  # type: ignore[assignment]
        params = forward.params.params
        if not params or forward.params.posonly_params:
            continue
        ctx = params[0].name.value
        if scopes[forward.body.body[0]].accesses[ctx]:  # type: ignore[attr-defined]
            continue
        name = snake_case(cls.name.value)
        if global_scope[name]:
            continue
        uses = [access.node for assignment in global_scope[cls.name.value] for access in assignment.references]
        applies = [parents.get(use) for use in uses]
        if not uses or not all(m.matches(a, m.Attribute(attr=m.Name("apply"))) and a.value is u for a, u in zip(applies, uses)):
            continue
        function = forward.with_changes(
            name=cst.Name(name),
            decorators=(),
            params=forward.params.with_changes(params=params[1:]),
            leading_lines=cls.leading_lines,
        )
        replacements: dict = {cls: function}
        replacements.update({apply: cst.Name(name) for apply in applies})
        yield lambda r=replacements: replace_nodes(module, r)
