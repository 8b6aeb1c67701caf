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
    """Yield `module` with every `A = B` removed and every read of `A` reading `B` (along chains: `b = a`,
    `c = b`), then one alias at a time, in source order.

    Both names are bound exactly once in the scope of the alias (so `B` is what it was when `A` was bound,
    everywhere `A` is read), and no scope that reads `A` binds a `B` of its own: at module level, or in the body
    of a module-level function or method, where `B` is bound once there (a parameter, a value: a graph's program
    bypassed to `sub = getitem`) or, not bound there, once at module level.
    """

    return distinct_candidates(module, _removals(module))


def _removals(module: cst.Module) -> Iterator[cst.Module | None]:
    scopes = metadata(module).resolve(ScopeProvider)
    aliases = list(_aliases(module, scopes))
    if len(aliases) > 1:
        yield lambda: replace_nodes(module, _all_removed(aliases, scopes))
    for alias in aliases:
        yield lambda a=alias: replace_nodes(module, _all_removed([a], scopes))


def _aliases(module: cst.Module, scopes) -> Iterator[tuple[cst.SimpleStatementLine, str, str, list[cst.CSTNode]]]:
    """Each removable `A = B`: its statement, `A`, `B` and the reads of `A`."""

    global_scope = scopes[module]
    for statement in _statements_of_module_and_functions(module):
        if not m.matches(statement, _ALIAS):
            continue
        assign = statement.body[0]  # type: ignore[attr-defined]
        alias, original = assign.targets[0].target.value, assign.value.value
        scope = scopes[assign]
        if alias == original or len(scope.assignments[alias]) != 1:
            continue
        bound_here = len(scope.assignments[original])
        if bound_here != 1 and not (bound_here == 0 and len(global_scope.assignments[original]) == 1):
            continue
        reads = [access.node for access in next(iter(scope.assignments[alias])).references]
        if any(scopes[node] is not scope and binds_locally(scopes[node], original) for node in reads):
            continue
        yield statement, alias, original, reads


def _all_removed(aliases: list, scopes) -> dict:
    """The edit removing ``aliases``: each statement gone, each read of an alias reading what its chain ends in."""

    originals = {(id(scopes[statement.body[0]]), alias): original for statement, alias, original, _ in aliases}

    def resolved(scope, name: str) -> str:
        seen = set()
        while (id(scope), name) in originals and name not in seen:
            seen.add(name)
            name = originals[(id(scope), name)]
        return name

    replacements: dict = {}
    for statement, alias, _, reads in aliases:
        scope = scopes[statement.body[0]]
        for node in reads:
            replacements[node] = cst.Name(resolved(scope, alias))
        replacements[statement] = cst.RemovalSentinel.REMOVE
    return replacements


def _statements_of_module_and_functions(module: cst.Module) -> Iterator[cst.CSTNode]:
    yield from module.body
    for node in module.body:
        methods = node.body.body if isinstance(node, cst.ClassDef) and isinstance(node.body, cst.IndentedBlock) else ()
        for function in (node, *methods):
            if isinstance(function, cst.FunctionDef) and isinstance(function.body, cst.IndentedBlock):
                yield from function.body.body
