"""Layout of the final repro: changes that keep the program's AST identical, so they need no oracle call.

Reduction leaves parentheses that inlining needed once and blank lines of deleted code; a person expects
PEP 8 spacing and no redundant brackets.
"""

from __future__ import annotations

import ast

import libcst as cst
from minimizer.syntax import parse_python


def format_source(text: str) -> str:
    """Return ``text`` without redundant parentheses and with PEP 8 blank lines around top-level definitions.

    The result parses to the same AST as ``text`` (it is returned unchanged if anything would differ).
    """

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return text
    module = _drop_redundant_parentheses(module)
    module = _space_top_level(module)
    result = module.code
    return result if _same_ast(result, text) else text


def _same_ast(a: str, b: str) -> bool:
    try:
        return ast.dump(parse_python(a)) == ast.dump(parse_python(b))
    except SyntaxError:
        return False


class _ParenthesisStripper(cst.CSTTransformer):
    """Remove each expression's parentheses where the module's AST stays the same without them."""

    def __init__(self) -> None:
        self.candidates: list[cst.BaseExpression] = []

    def on_leave(self, original_node: cst.CSTNode, updated_node: cst.CSTNode) -> cst.CSTNode:
        if isinstance(updated_node, cst.BaseExpression) and getattr(updated_node, "lpar", ()):
            self.candidates.append(original_node)  # type: ignore[arg-type]
        return updated_node


def _drop_redundant_parentheses(module: cst.Module) -> cst.Module:
    reference = ast.dump(parse_python(module.code))
    kept = 0  # candidates, in visiting order, whose parentheses must stay
    while True:
        finder = _ParenthesisStripper()
        module.visit(finder)  # again after each change: a replaced subtree has new nodes
        if kept >= len(finder.candidates):
            return module
        node = finder.candidates[kept]
        try:
            trial = module.deep_replace(node, node.with_changes(lpar=[], rpar=[]))  # type: ignore[arg-type]
            same = isinstance(trial, cst.Module) and ast.dump(parse_python(trial.code)) == reference
        except (cst.CSTValidationError, SyntaxError):  # an empty tuple is its parentheses
            same = False
        if same:
            module = trial  # type: ignore[assignment]
        else:
            kept += 1


def _is_definition(statement: cst.CSTNode) -> bool:
    return isinstance(statement, (cst.FunctionDef, cst.ClassDef))


def _space_top_level(module: cst.Module) -> cst.Module:
    """Two blank lines before and after top-level functions and classes; none at the very start."""

    body = list(module.body)
    spaced = []
    for index, statement in enumerate(body):
        wanted = None
        if index == 0:
            wanted = 0
        elif _is_definition(statement) or _is_definition(body[index - 1]):
            wanted = 2
        comments = [line for line in statement.leading_lines if line.comment is not None]
        if wanted is not None and not comments:
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()] * wanted)
        spaced.append(statement)
    return module.with_changes(body=spaced)
