"""Remove definitions nothing live reads: functions, classes, imported names, assigned names, `self.attr`s.

Liveness is mark-and-sweep over a def-use graph. The nodes are *definitions* (a `def`/`class` statement, one
imported name, a name-only assignment statement, a `self.NAME = ...` statement in `__init__`) plus a ROOT that
stands for every statement that defines nothing (the script's actual work). Each read of a name or attribute is
charged to the innermost definition around it, or to ROOT, and adds an edge from there to the definitions it may
read. A definition not reachable from ROOT is dead, even when another dead definition reads it.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections import Counter
from functools import lru_cache
from typing import Iterator

import libcst as cst
import libcst.matchers as m
import networkx as nx
from libcst.metadata import (
    ClassScope,
    ExpressionContext,
    ExpressionContextProvider,
    GlobalScope,
    MetadataWrapper,
    ScopeProvider,
)

from minimizer.source.cst_utils import (
    distinct_candidates,
    metadata,
    nodes_of_type,
    parent_map,
    preorder,
    remove_node,
    remove_nodes,
    replace_node,
    try_build,
)

_ROOT = "<live statements>"
_DUNDER = re.compile(r"^__\w+__$")
_SELF_ATTRIBUTE = m.Attribute(value=m.Name("self"), attr=m.Name())
# A target that only binds names: `x`, `a, b`, `(a, [b, *c])`.
_NAME_TARGET = m.Name() | m.Tuple() | m.List() | m.StarredElement()


def remove_unused_definitions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` without definitions that no live code reads.

    First one candidate removing every dead definition at once, then one candidate per dead definition, users
    before the definitions they read (so that each step leaves nothing that still runs and reads a removed name).
    Names in `__all__` and dunder names count as read.
    """
    return distinct_candidates(module, _removals(module))


def keep_effects_of_unused_assignments(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with `name = expr` turned into plain `expr` where nothing reads `name`.

    `remove_unused_definitions` drops such a statement whole; when its right-hand side does the work that
    shows the bug (`out = torch.compile(f)(x)`), only the name can go.
    """
    wrapper = metadata(module)
    dead = [node for node in dead_definitions(wrapper) if _is_plain_assignment(node)]
    return distinct_candidates(module, (lambda node=node: _keep_value(module, node) for node in dead))


def remove_definitions_left_dead(before: cst.Module, after: cst.Module) -> cst.Module | None:
    """``after`` without the definitions that became dead in the step from ``before`` to ``after``; ``None`` if
    the step left none.

    A step that bypasses ``.to(device)`` leaves ``device = ...`` unread. The reducer tries this right after each
    step instead of waiting for ``remove_unused_definitions``' turn in the next round; definitions that were
    already dead before the step (kept because removing them loses the bug) are not tried again.
    """

    now_dead = definitions_left_dead(before, after)
    return try_build(lambda: remove_nodes(after, now_dead)) if now_dead else None


def definitions_left_dead(before: cst.Module, after: cst.Module) -> list[cst.CSTNode]:
    """The definitions of ``after`` that nothing live reads and that were read in ``before``."""

    if not _names_fewer(before.code, after.code):
        return []  # every name is read as often as before: nothing can have lost its last reader
    was_dead = {before.code_for_node(node) for node in _dead_definitions_of(before)}
    return [node for node in _dead_definitions_of(after) if after.code_for_node(node) not in was_dead]


def _names_fewer(before: str, after: str) -> bool:
    """Whether some name occurs fewer times in ``after`` than in ``before`` (a definition goes dead only then)."""

    counts_after = _name_counts(after)
    return any(counts_after[name] < count for name, count in _name_counts(before).items())


@lru_cache(maxsize=64)
def _name_counts(text: str) -> Counter[str]:
    tokens = tokenize.generate_tokens(io.StringIO(text).readline)
    return Counter(token.string for token in tokens if token.type == tokenize.NAME)


@lru_cache(maxsize=64)
def _dead_definitions_of(module: cst.Module) -> tuple[cst.CSTNode, ...]:
    # One step's `after` is the next step's `before`, and speculation asks about many steps from one `before`.
    return tuple(dead_definitions(metadata(module)))


def _is_plain_assignment(node: cst.CSTNode) -> bool:
    return m.matches(node, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=~m.Name()))


def _keep_value(module: cst.Module, assign: cst.Assign) -> cst.Module:
    return replace_node(module, assign, cst.Expr(value=assign.value))


def _removals(module: cst.Module) -> Iterator[cst.Module | None]:
    wrapper = metadata(module)
    dead = dead_definitions(wrapper)
    if len(dead) > 1:
        yield lambda: remove_nodes(module, dead)
    for definition in dead:
        yield lambda: remove_node(module, definition)


def dead_definitions(wrapper: MetadataWrapper) -> list[cst.CSTNode]:
    """Return the dead definitions of the wrapped module, users before what they use, else in source order.

    The nodes returned belong to `wrapper.module` and can be passed to `remove_node`/`remove_nodes`.
    """
    graph = _def_use_graph(wrapper)
    live = nx.descendants(graph, _ROOT)
    dead = [node for node in graph if node != _ROOT and node not in live]
    position = {node: index for index, node in enumerate(preorder(wrapper.module))}
    return _users_first(graph.subgraph(dead), position)


def _users_first(dead_graph: nx.DiGraph, position: dict[cst.CSTNode, int]) -> list[cst.CSTNode]:
    # Cycles (mutual recursion) collapse into one component; components in dependency order, ties by source order.
    condensed = nx.condensation(dead_graph)
    first_line = {
        component: min(position[node] for node in condensed.nodes[component]["members"]) for component in condensed
    }
    ordered = []
    for component in nx.lexicographical_topological_sort(condensed, key=first_line.__getitem__):
        ordered.extend(sorted(condensed.nodes[component]["members"], key=position.__getitem__))
    return ordered


def _def_use_graph(wrapper: MetadataWrapper) -> nx.DiGraph:
    module = wrapper.module
    resolved = wrapper.resolve_many([ScopeProvider, ExpressionContextProvider])  # one visit for both
    scopes, contexts = resolved[ScopeProvider], resolved[ExpressionContextProvider]
    parents = parent_map(module)

    graph = nx.DiGraph()
    graph.add_node(_ROOT)
    binding_units = _binding_units(scopes, parents)
    attribute_units = _self_attribute_units(module)
    for definitions in [*binding_units.values(), *attribute_units.values()]:
        graph.add_nodes_from(definitions)

    owner = _owners(module, set(graph.nodes))
    exported = _exported_names(module)
    for assignment, definitions in binding_units.items():
        always_live = _DUNDER.match(assignment.name) or (
            assignment.name in exported and isinstance(assignment.scope, GlobalScope)
        )
        for definition in definitions:
            if always_live:
                graph.add_edge(_ROOT, definition)
            for access in assignment.references:
                graph.add_edge(owner.get(access.node, _ROOT), definition)

    for node in _attribute_reads(module, contexts):
        for definition in attribute_units.get(node.attr.value, ()):
            graph.add_edge(owner.get(node, _ROOT), definition)
    return graph


def _binding_units(scopes, parents) -> dict:
    """Map each scope assignment that a removable statement makes to that statement (as a 1-element list)."""
    units = {}
    for scope in {scope for scope in scopes.values() if scope is not None}:
        if isinstance(scope, ClassScope):
            continue  # class attributes and methods are read through attributes; we cannot track them by name
        for assignment in scope.assignments:
            definition = _defining_statement(assignment, parents)
            if definition is not None:
                units[assignment] = [definition]
    return units


def _defining_statement(assignment, parents) -> cst.CSTNode | None:
    node = getattr(assignment, "node", None)
    if m.matches(node, m.FunctionDef() | m.ClassDef()):
        return node
    if m.matches(node, m.Import() | m.ImportFrom(names=m.MatchIfTrue(lambda names: isinstance(names, (list, tuple))))):
        return _alias_binding(node, assignment.name)
    if m.matches(node, m.Name()):
        return _name_only_assignment(node, parents)
    return None


def _alias_binding(statement: cst.Import | cst.ImportFrom, name: str) -> cst.ImportAlias | None:
    if m.matches(statement, m.ImportFrom(module=m.Name("__future__"))):
        return None  # changes how the rest of the file compiles; never "unused"
    for alias in statement.names:
        bound = alias.evaluated_alias or alias.evaluated_name
        if bound == name or (alias.evaluated_alias is None and bound.startswith(name + ".")):
            return alias
    return None


def _name_only_assignment(name: cst.Name, parents) -> cst.CSTNode | None:
    """The `Assign`/`AnnAssign`/`AugAssign` whose targets `name` belongs to, if all its targets are plain names."""
    node = parents[name]
    while m.matches(node, m.Element() | m.StarredElement() | m.Tuple() | m.List()):
        node = parents[node]
    if m.matches(node, m.AssignTarget()):
        statement = parents[node]
        if all(m.matches(target.target, _NAME_TARGET) for target in statement.targets) and not _binds_attributes(
            statement
        ):
            return statement
        return None
    if m.matches(node, m.AnnAssign(target=m.Name()) | m.AugAssign(target=m.Name())) and node.target is name:
        return node
    return None


def _binds_attributes(statement: cst.Assign) -> bool:
    return any(m.findall(target.target, m.Attribute() | m.Subscript()) for target in statement.targets)


def _self_attribute_units(module: cst.Module) -> dict[str, list[cst.Assign]]:
    """Map attribute names to the `self.NAME = ...` statements of `__init__` methods that set only them."""
    units: dict[str, list[cst.Assign]] = {}
    for init in (f for f in nodes_of_type(module, cst.FunctionDef) if f.name.value == "__init__"):
        for statement in m.findall(init.body, m.Assign()):
            targets = [target.target for target in statement.targets]
            if all(m.matches(target, _SELF_ATTRIBUTE) for target in targets):
                for target in targets:
                    units.setdefault(target.attr.value, []).append(statement)
    return units


def _attribute_reads(module: cst.Module, contexts) -> Iterator[cst.Attribute]:
    # `self.x += 1` stores, but it also reads `self.x`, so it keeps `self.x = ...` alive.
    augmented = {statement.target for statement in nodes_of_type(module, cst.AugAssign)}
    for node in nodes_of_type(module, cst.Attribute):
        if contexts.get(node) != ExpressionContext.STORE or node in augmented:
            yield node


def _owners(module: cst.Module, definitions: set) -> dict[cst.CSTNode, object]:
    """Map every node to the innermost definition enclosing it (a definition owns itself), or to ROOT."""
    owner: dict[cst.CSTNode, object] = {}
    stack: list[object] = [_ROOT]

    def walk(node: cst.CSTNode) -> None:
        entered = node in definitions
        if entered:
            stack.append(node)
        owner[node] = stack[-1]
        for child in node.children:
            walk(child)
        if entered:
            stack.pop()

    walk(module)
    return owner


def _exported_names(module: cst.Module) -> set[str]:
    """The strings of a module-level `__all__ = [...]` / `(...)`."""
    names: set[str] = set()
    exports = m.Assign(targets=[m.AssignTarget(target=m.Name("__all__"))])
    for statement in (a for a in nodes_of_type(module, cst.Assign) if m.matches(a, exports)):
        for string in m.findall(statement.value, m.SimpleString()):
            value = string.evaluated_value
            names.add(value if isinstance(value, str) else value.decode())
    return names
