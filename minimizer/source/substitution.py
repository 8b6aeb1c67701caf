"""An expression put where a name or another expression stood: nodes swapped for others by identity, names for
their values, each in parentheses where its new place needs them; refused where a name the expression binds
itself (a lambda's parameter, a comprehension's target) would capture what is put in.
"""

from __future__ import annotations

from typing import Mapping, TypeVar

import libcst as cst
import libcst.matchers as m

__all__ = [
    "BINDS_NAMES",
    "as_operand",
    "bind_names",
    "substitute_expression",
    "substitute_under",
    "swap_nodes",
    "variable_names",
]


NodeT = TypeVar("NodeT", bound=cst.CSTNode)


class _Swapper(cst.CSTTransformer):
    def __init__(self, mapping: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        return self.mapping.get(original_node, updated_node)


def swap_nodes(node: NodeT, mapping: Mapping[cst.CSTNode, cst.CSTNode]) -> NodeT:
    """`node` (any node, not only a module) with the nodes that are keys of `mapping` (by identity) swapped for
    their values, without the removal repairs of `replace_nodes`."""

    return node.visit(_Swapper(mapping)) if mapping else node  # type: ignore[return-value]


# Expressions with a scope of their own: a lambda's parameters, a comprehension's targets are bound inside.
BINDS_NAMES = m.Lambda() | m.GeneratorExp() | m.ListComp() | m.DictComp() | m.SetComp()


def bind_names(expression: NodeT, values: Mapping[str, cst.BaseExpression]) -> NodeT | None:
    """`expression` with every name in `values` replaced by its value (parameters bound to arguments or
    defaults); None when the expression binds names of its own (a lambda's parameters, a comprehension's
    targets) that a replaced name or a name in a value shares, since the replacement could land under that
    binding: `[model(b) for b in batches]` binds `batches` to `data` and `model` to `opt`, not `b` to anything."""

    found = {node: values[node.value] for node in variable_names(expression) if node.value in values}
    if found and m.findall(expression, BINDS_NAMES):
        bound = _names_bound_inside(expression)
        used = {name.value for value in found.values() for name in variable_names(value)}
        if bound & (used | {node.value for node in found}):
            return None
    return swap_nodes(expression, found)


def _names_bound_inside(expression: cst.CSTNode) -> set[str]:
    """The names a lambda or comprehension inside ``expression`` binds: its parameters, its loop targets."""

    names: set[str] = set()
    for comp_for in m.findall(expression, m.CompFor()):
        names |= {name.value for name in m.findall(comp_for.target, m.Name())}  # type: ignore[attr-defined]
    for lam in m.findall(expression, m.Lambda()):
        names |= {param.name.value for param in m.findall(lam.params, m.Param())}  # type: ignore[attr-defined]
    return names


def variable_names(node: cst.CSTNode) -> list[cst.Name]:
    """The names in ``node`` that are variables: not the attribute of ``x.attr`` nor the keyword of ``f(k=v)``."""

    not_variables = {a.attr for a in m.findall(node, m.Attribute())} | {
        a.keyword for a in m.findall(node, m.Arg(keyword=m.Name()))  # type: ignore[union-attr]
    }
    return [name for name in m.findall(node, m.Name()) if name not in not_variables]  # type: ignore[misc]


_ATOM = (
    m.Name() | m.Attribute() | m.Call() | m.Subscript() | m.Integer() | m.Float() | m.Imaginary() | m.SimpleString()
    | m.List() | m.Dict()
)


def as_operand(value: cst.BaseExpression) -> cst.BaseExpression:
    """``value``, in parentheses unless it is an atom, so it can stand for a name in any expression."""

    if m.matches(value, _ATOM) or value.lpar:
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


# Expressions that can stand anywhere an operand can without parentheses. (Not numbers: `(1).real` needs them.)
_ATOM_WITHOUT_PARENTHESES = (
    m.Name() | m.Attribute() | m.Call() | m.Subscript() | m.SimpleString() | m.ConcatenatedString()
    | m.FormattedString() | m.List() | m.Dict() | m.Set() | m.ListComp() | m.SetComp() | m.DictComp() | m.Ellipsis()
)


# Where any expression stands without parentheses: an assignment's value, a return, an argument, an element.
_HOLDS_ANY_EXPRESSION = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Element, cst.Expr, cst.Index)


def substitute_under(
    parent: cst.CSTNode | None, original: cst.BaseExpression, replacement: cst.BaseExpression
) -> cst.BaseExpression:
    """``substitute_expression``, but bare where ``parent`` (``original``'s) holds any expression and
    ``original`` had no parentheses of its own: ``y = x * 2``, not ``y = (x * 2)``."""

    if isinstance(parent, _HOLDS_ANY_EXPRESSION) and not original.lpar:
        return replacement
    return substitute_expression(original, replacement)


def substitute_expression(original: cst.BaseExpression, replacement: cst.BaseExpression) -> cst.BaseExpression:
    """Return `replacement` made safe to stand where `original` stood.

    An atomic replacement (name, attribute, call, subscript, display) needs no parentheses and gets none of
    `original`'s. A non-atomic one (`a + b`, `x if c else y`, a generator) keeps its own, else inherits
    `original`'s, else gets new ones, because the surrounding operator may bind tighter than it does.
    """
    if m.matches(replacement, _ATOM_WITHOUT_PARENTHESES):
        return replacement.with_changes(lpar=[], rpar=[])
    if replacement.lpar:
        return replacement
    if original.lpar:
        return replacement.with_changes(lpar=original.lpar, rpar=original.rpar)
    return replacement.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
