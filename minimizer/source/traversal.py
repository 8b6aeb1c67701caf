"""Reading a libcst tree fast: children, parents, preorder and nodes by type, without libcst's rebuilding visits.

libcst's ``node.children`` and ``node.visit`` construct every node again only to look at it; a reduction asks such
questions of thousands of modules, so these answer them by reading fields, remembered per module.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import inspect
import re
from typing import TypeVar

import libcst as cst
import libcst.matchers as m

NodeT = TypeVar("NodeT", bound=cst.CSTNode)


def children(node: cst.CSTNode) -> list[cst.CSTNode]:
    """``node.children``, in the same order, without libcst's cost: its property rebuilds the node (every child
    visited, every node constructed again) only to collect them, which made whole-module walks a tenth of the
    parent's work. Here each node type's child fields are read once from its ``_visit_and_replace_children``
    (the order libcst visits them, which is the order of the code); a type whose source cannot be read falls
    back to libcst."""

    fields = _CHILD_FIELDS.get(type(node))
    if fields is None:
        fields = _CHILD_FIELDS[type(node)] = _child_fields(type(node))
    if fields is _UNKNOWN_FIELDS:
        return list(node.children)
    found: list[cst.CSTNode] = []
    for name in fields:
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            found.append(value)
        elif isinstance(value, (tuple, list)):
            found.extend(item for item in value if isinstance(item, cst.CSTNode))
    return found


def walk(node: cst.CSTNode, visitor: cst.CSTVisitor) -> None:
    """``node.visit(visitor)`` for a visitor that only reads (its ``visit_X`` / ``leave_X`` methods, no attribute
    hooks such as ``visit_Call_func``): libcst's own visit rebuilds every node it passes, this one does not."""

    if visitor.on_visit(node):
        for child in children(node):
            walk(child, visitor)
    visitor.on_leave(node)


_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_UNKNOWN_FIELDS: tuple[str, ...] = ("?",)
_VISITED_FIELD = re.compile(r'visit_\w+\(\s*self,\s*"(\w+)"')


def _child_fields(kind: type) -> tuple[str, ...]:
    try:
        source = inspect.getsource(kind._visit_and_replace_children)  # type: ignore[attr-defined]
    except (OSError, TypeError):
        return _UNKNOWN_FIELDS
    names = tuple(dict.fromkeys(_VISITED_FIELD.findall(source)))  # ImportFrom names one field twice
    declared = {field.name for field in dataclasses.fields(kind)}
    return names if set(names) <= declared else _UNKNOWN_FIELDS


@functools.lru_cache(maxsize=64)
def parent_map(root: cst.Module) -> dict[cst.CSTNode, cst.CSTNode]:
    """Each node's parent in `root` (what libcst's ParentNodeProvider gives, at a third of its cost), remembered
    per module: a pass builds many candidates from one module, and several passes analyse the same one."""

    parents: dict[cst.CSTNode, cst.CSTNode] = {}
    stack = [root]
    while stack:
        node = stack.pop()
        for child in children(node):
            parents[child] = node
            stack.append(child)
    return parents


@functools.lru_cache(maxsize=64)
def preorder(root: cst.Module) -> tuple[cst.CSTNode, ...]:
    """Every node of `root`, parents before children, in source order (one walk per module, remembered)."""

    order: list[cst.CSTNode] = []
    stack: list[cst.CSTNode] = [root]
    while stack:
        node = stack.pop()
        order.append(node)
        stack.extend(reversed(children(node)))
    return tuple(order)


@functools.lru_cache(maxsize=64)
def _nodes_by_type(root: cst.Module) -> dict[type, list[cst.CSTNode]]:
    found: dict[type, list[cst.CSTNode]] = collections.defaultdict(list)
    for node in preorder(root):
        found[type(node)].append(node)
    return found


def nodes_of_type(root: cst.Module, kind: type[NodeT]) -> list[NodeT]:
    """The nodes of `root` of exactly type `kind`, in source order: what `m.findall(root, m.Kind())` finds,
    without a visit of the whole module per question."""

    return list(_nodes_by_type(root).get(kind, ()))  # type: ignore[arg-type]


def find_all(root: cst.CSTNode, matcher: m.BaseMatcherNode) -> list[cst.CSTNode]:
    """``m.findall(root, matcher)``, same nodes in the same order; for a module and a matcher of one node type,
    from the module's remembered nodes of that type instead of a visit of the whole tree."""

    kind = getattr(cst, type(matcher).__name__, None)
    if not isinstance(root, cst.Module) or not (isinstance(kind, type) and issubclass(kind, cst.CSTNode)):
        return m.findall(root, matcher)  # type: ignore[return-value]
    return [node for node in _nodes_by_type(root).get(kind, ()) if m.matches(node, matcher)]


def holds(tree: cst.CSTNode, node: cst.CSTNode) -> bool:
    """Whether ``node`` is ``tree`` or stands anywhere under it."""

    return tree is node or any(holds(child, node) for child in children(tree))


def names_of(root: cst.CSTNode, name: str) -> int:
    """How often ``root`` names the variable ``name``: an attribute's name (`x.name`), a keyword (`name=`) and a
    function's or class's own name are other things."""

    others = {id(node.attr) for node in find_all(root, m.Attribute(attr=m.Name(name)))}
    others |= {id(arg.keyword) for arg in find_all(root, m.Arg(keyword=m.Name(name)))}
    others |= {id(node.name) for node in find_all(root, m.FunctionDef(name=m.Name(name)) | m.ClassDef(name=m.Name(name)))}
    return sum(id(node) not in others for node in find_all(root, m.Name(name)))
