"""Remove a second name for the same thing: `model = phase_features` then `torch.compile(model)(x), model(x)`.

Flattening classes and wrappers leaves such aliases behind (`fn = compiled`, `offset = global_offset`). A name
read once is inlined by `inline_single_use_variables`; an alias read several times needs its reads renamed.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import binds_locally, metadata

__all__ = ["remove_name_aliases"]

_ALIAS = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Name())])


def remove_name_aliases(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one `A = B` removed and every read of `A` reading `B`, in source order.

    Both names are bound exactly once at module level (so `B` is what it was when `A` was bound, everywhere `A`
    is read), and no scope that reads `A` binds a `B` of its own; or, in the body of a module-level function or
    method, `A` is bound once there and `B` is a name bound once at module level and not in the function.
    """

    return distinct_candidates(module, _removals(module))


def _removals(module: cst.Module) -> Iterator[cst.Module | None]:
    scopes = metadata(module).resolve(ScopeProvider)
    global_scope = scopes[module]
    for statement in _statements_of_module_and_functions(module):
        if not m.matches(statement, _ALIAS):
            continue
        assign = statement.body[0]  # type: ignore[attr-defined]
        alias, original = assign.targets[0].target.value, assign.value.value
        scope = scopes[assign]
        if alias == original or len(scope.assignments[alias]) != 1 or len(global_scope.assignments[original]) != 1:
            continue
        if scope is not global_scope and scope.assignments[original]:
            continue  # in a function, the alias of a module-level name only
        reads = [access.node for access in next(iter(scope.assignments[alias])).references]
        if any(binds_locally(scopes[node], original) for node in reads):
            continue
        replacements: dict = {node: cst.Name(original) for node in reads}
        replacements[statement] = cst.RemovalSentinel.REMOVE
        yield lambda r=replacements: replace_nodes(module, r)


def _statements_of_module_and_functions(module: cst.Module) -> Iterator[cst.CSTNode]:
    yield from module.body
    for node in module.body:
        methods = node.body.body if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock) else ()
        for function in (node, *methods):
            if isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock):
                yield from function.body.body
