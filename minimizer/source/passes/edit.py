"""Editing a module by node identity: nodes replaced or removed, and what a removal breaks around them repaired.

Nodes are matched by identity (`is`), so callers must pass nodes taken from the very module they edit. After a
removal an emptied block gets `pass`, an import that lost all its names disappears, a trailing comma or
semicolon left behind goes.
"""

from __future__ import annotations

from typing import Iterable, Mapping, Union

import libcst as cst
import libcst.matchers as m

from minimizer.source.traversal import parent_map

__all__ = ["RemovalRepairingTransformer", "Replacement", "remove_node", "remove_nodes", "replace_node", "replace_nodes"]


Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


def replace_node(module: cst.Module, target: cst.CSTNode, new_node: Replacement) -> cst.Module:
    """Return `module` with the node that *is* `target` replaced by `new_node` (or removed by a sentinel).

    Removal leaves bodies non-empty and drops statements that lose all their names; see `replace_nodes`.
    """
    return replace_nodes(module, {target: new_node})


def replace_nodes(module: cst.Module, replacements: Mapping[cst.CSTNode, Replacement]) -> cst.Module:
    """Return `module` with several nodes replaced at once; keys are nodes of `module` (libcst nodes hash by
    identity), values are new nodes or `cst.RemovalSentinel.REMOVE`.

    After removals: an emptied block gets `pass`, an emptied `import` disappears, a trailing comma or semicolon
    left behind is dropped, a tuple that shrank to one element keeps its comma.
    """
    return module.visit(_Replacer(replacements))


def remove_node(module: cst.Module, target: cst.CSTNode) -> cst.Module:
    """Return `module` without `target`: a statement, a small statement of `a; b`, an argument, an import alias,
    a list element, ...

    A block that becomes empty gets `pass`; an import that loses all its names disappears.
    """
    return replace_node(module, target, cst.RemovalSentinel.REMOVE)


def remove_nodes(module: cst.Module, targets: Iterable[cst.CSTNode]) -> cst.Module:
    """Return `module` without any of `targets` (see `remove_node`)."""
    return replace_nodes(module, {t: cst.RemovalSentinel.REMOVE for t in targets})


def _pass_line() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Pass()])


def _drop_trailing_comma(elements: tuple) -> tuple:
    # A removed last element leaves `f(a, )`; valid, but one token larger than needed.
    if not elements or not hasattr(elements[-1], "comma"):
        return elements
    last = elements[-1]
    if isinstance(last.comma, cst.Comma):
        last = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return (*elements[:-1], last)


def _is_sequence(value) -> bool:
    return isinstance(value, (tuple, list))


_IMPORT_WITH_NAMES = m.Import() | m.ImportFrom(names=m.MatchIfTrue(_is_sequence))


def _drop_trailing_semicolon(body: tuple) -> tuple:
    if body and isinstance(getattr(body[-1], "semicolon", None), cst.Semicolon):
        return (*body[:-1], body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
    return body


class RemovalRepairingTransformer(cst.CSTTransformer):
    """A transformer base that repairs what removing statements or elements breaks in the enclosing nodes.

    Subclass it and return `cst.RemovalSentinel.REMOVE` freely: emptied blocks get `pass`, emptied simple
    statement lines vanish, trailing commas and semicolons left behind are dropped. (Removing an import alias
    needs `replace_nodes`, because imports refuse a trailing comma at construction time.) A subclass that defines
    its own `leave_IndentedBlock`, `leave_SimpleStatementSuite`, `leave_SimpleStatementLine`, `leave_Call`,
    `leave_List` or `leave_Tuple` must call `super()` on the result.
    """

    # A body-holding node whose statements were all removed must keep `pass`.
    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[_pass_line()])
        return updated_node

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.Pass()])
        if len(updated_node.body) != len(original_node.body):
            return updated_node.with_changes(body=_drop_trailing_semicolon(updated_node.body))
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return cst.RemovalSentinel.REMOVE
        if len(updated_node.body) != len(original_node.body):
            return updated_node.with_changes(body=_drop_trailing_semicolon(updated_node.body))
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if len(updated_node.args) != len(original_node.args):
            return updated_node.with_changes(args=_drop_trailing_comma(updated_node.args))
        return updated_node

    def leave_List(self, original_node, updated_node):
        if len(updated_node.elements) != len(original_node.elements):
            return updated_node.with_changes(elements=_drop_trailing_comma(updated_node.elements))
        return updated_node

    def leave_Tuple(self, original_node, updated_node):
        # A one-element tuple needs its comma; an emptied tuple needs its parentheses.
        if not updated_node.elements:
            return updated_node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        if len(updated_node.elements) == 1 and len(original_node.elements) != 1:
            only = updated_node.elements[0]
            return updated_node.with_changes(elements=[only.with_changes(comma=cst.Comma())])
        return updated_node


def _ancestors(root: cst.Module, targets: Iterable[cst.CSTNode]) -> set[cst.CSTNode]:
    """The nodes on the paths from `root` down to any of `targets` (targets excluded)."""
    parents = parent_map(root)
    found: set[cst.CSTNode] = set()
    for target in targets:
        node = parents.get(target)
        while node is not None and node not in found:
            found.add(node)
            node = parents.get(node)
    return found


class _Replacer(RemovalRepairingTransformer):
    """Swap nodes by identity, then let the base class repair the enclosing nodes."""

    def __init__(self, replacements: Mapping[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self._replacements = dict(replacements)
        self._paths: set[cst.CSTNode] = set()

    def on_visit(self, node):
        if isinstance(node, cst.Module):
            self._paths = _ancestors(node, self._replacements)
        if node in self._replacements:
            return False  # replaced whole; its children do not matter
        if node not in self._paths:
            return False  # no target below: keep the subtree as it is, without rebuilding it
        # Import nodes validate on construction (no trailing comma, at least one name), so a removed alias must
        # be handled by rebuilding the whole import before its children are visited.
        if node not in self._replacements and m.matches(node, _IMPORT_WITH_NAMES):
            names = node.names
            kept = [self._replacements.get(alias, alias) for alias in names]
            kept = [alias for alias in kept if isinstance(alias, cst.ImportAlias)]
            if len(kept) != len(names):
                fixed = node.with_changes(names=_drop_trailing_comma(tuple(kept))) if kept else cst.RemovalSentinel.REMOVE
                self._replacements[node] = fixed
                return False
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        if original_node in self._replacements:
            return self._replacements[original_node]
        return super().on_leave(original_node, updated_node)
