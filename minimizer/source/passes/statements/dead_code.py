"""Remove definitions nothing live reads: functions, classes, imported names, assigned names, `self.attr`s.

Liveness is mark-and-sweep over the def-use graph of `minimizer.source.def_use`: a definition not reachable
from the statements that define nothing (the script's actual work) is dead, even when another dead definition
reads it.
"""

from __future__ import annotations

import io
import tokenize
from collections import Counter
from functools import lru_cache
from typing import Iterator

import libcst as cst
import libcst.matchers as m
import networkx as nx

from minimizer.source.def_use import ROOT, def_use_graph
from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_node, remove_nodes, replace_node
from minimizer.source.rendering import code_of, render


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
    dead = [node for node in _dead_definitions_of(module) if _is_plain_assignment(node)]
    return distinct_candidates(module, (lambda node=node: _keep_value(module, node) for node in dead))


def definitions_left_dead(before: cst.Module, after: cst.Module) -> list[cst.CSTNode]:
    """The definitions of ``after`` that nothing live reads and that were read in ``before``."""

    if not _names_fewer(render(before), render(after)):
        return []  # every name is read as often as before: nothing can have lost its last reader
    was_dead = {code_of(before, node) for node in _dead_definitions_of(before)}  # (few: cheap to render)
    return [node for node in _dead_definitions_of(after) if code_of(after, node) not in was_dead]


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
    return tuple(dead_definitions(module))


def _is_plain_assignment(node: cst.CSTNode) -> bool:
    return m.matches(node, m.Assign(targets=[m.AssignTarget(target=m.Name())], value=~m.Name()))


def _keep_value(module: cst.Module, assign: cst.Assign) -> cst.Module:
    return replace_node(module, assign, cst.Expr(value=assign.value))


def _removals(module: cst.Module) -> Iterator[cst.Module | None]:
    dead = _dead_definitions_of(module)
    if len(dead) > 1:
        yield lambda: remove_nodes(module, dead)
    for definition in dead:
        yield lambda: remove_node(module, definition)


def dead_definitions(module: cst.Module) -> list[cst.CSTNode]:
    """Return the dead definitions of ``module`` (nodes of it, for `remove_node`/`remove_nodes`), users before
    what they use, else in source order."""

    found = def_use_graph(module)
    live = nx.descendants(found.graph, ROOT)
    dead = [node for node in found.graph if node != ROOT and node not in live]
    return _users_first(found.graph.subgraph(dead), found.position)


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
