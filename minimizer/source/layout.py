"""Layout of the final repro: changes that keep the program's AST identical, so they need no oracle call.

Reduction leaves parentheses that inlining needed once and blank lines of deleted code; a person expects
PEP 8 spacing and no redundant brackets.
"""

from __future__ import annotations

import ast

import libcst as cst

from minimizer.source.traversal import walk
from minimizer.syntax import parse_python


def format_source(text: str) -> str:
    """Return ``text`` without redundant parentheses and with PEP 8 blank lines around top-level definitions.

    The result parses to the same AST as ``text`` (it is returned unchanged if anything would differ).
    """

    try:
        module = cst.parse_module(text)
    except cst.ParserSyntaxError:
        return text
    module = module.visit(_StatementwiseStripper())
    module = _space_top_level(module)
    result = module.code
    return result if _same_ast(result, text) else text


def _same_ast(a: str, b: str) -> bool:
    try:
        return ast.dump(parse_python(a)) == ast.dump(parse_python(b))
    except SyntaxError:
        return False


class _ParenthesisFinder(cst.CSTVisitor):
    """The parenthesized expressions of one statement, in visiting order, not descending into nested blocks."""

    def __init__(self) -> None:
        self.found: list[cst.BaseExpression] = []

    def on_leave(self, original_node: cst.CSTNode) -> None:
        if isinstance(original_node, cst.BaseExpression) and getattr(original_node, "lpar", ()):
            self.found.append(original_node)

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> bool:
        return False


# The parts of a compound statement outside its blocks: where its own expressions are.
_HEADERS = {
    cst.FunctionDef: ("decorators", "params", "returns"),
    cst.ClassDef: ("decorators", "bases", "keywords"),
    cst.If: ("test",),
    cst.While: ("test",),
    cst.For: ("target", "iter"),
    cst.With: ("items",),
}
_PASS_BLOCK = cst.IndentedBlock(body=[cst.SimpleStatementLine(body=[cst.Pass()])])


class _StatementwiseStripper(cst.CSTTransformer):
    """Strip each statement's redundant parentheses on that statement alone: whether a pair can go depends only
    on the statement holding it, and re-checking one statement is far cheaper than re-checking the module."""

    def visit_SimpleStatementLine(self, node) -> bool:
        return False  # handled whole on leaving: nothing inside needs rebuilding first

    def leave_SimpleStatementLine(self, original_node, updated_node):
        return _stripped_alone(updated_node.with_changes(leading_lines=[])).with_changes(
            leading_lines=updated_node.leading_lines
        )

    def on_leave(self, original_node, updated_node):
        fields = _HEADERS.get(type(updated_node))
        if fields is None:
            return super().on_leave(original_node, updated_node)
        # The header alone: its blocks (already stripped, statement by statement) stand aside as `pass`.
        stub = updated_node.with_changes(body=_PASS_BLOCK, leading_lines=[])
        if hasattr(stub, "orelse"):
            stub = stub.with_changes(orelse=None)
        stripped = _stripped_alone(stub)
        return updated_node.with_changes(**{field: getattr(stripped, field) for field in fields})


def _stripped_alone(statement):
    module = _drop_redundant_parentheses(cst.Module(body=[statement]))
    return module.body[0]


def _drop_redundant_parentheses(module: cst.Module) -> cst.Module:
    reference = None
    kept = 0  # parenthesized expressions, in visiting order, whose parentheses must stay
    while True:
        finder = _ParenthesisFinder()
        walk(module, finder)  # again after each change: a replaced subtree has new nodes
        if kept >= len(finder.found):
            return module
        reference = reference or ast.dump(parse_python(module.code))
        node = finder.found[kept]
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


def _is_import(statement: cst.CSTNode) -> bool:
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, (cst.Import, cst.ImportFrom)) for small in statement.body
    )


def _space_top_level(module: cst.Module) -> cst.Module:
    """Two blank lines before and after top-level functions and classes; one after the imports where there
    was none; none at the very start."""

    body = list(module.body)
    spaced = []
    for index, statement in enumerate(body):
        wanted = None
        if index == 0:
            wanted = 0
        elif _is_definition(statement) or _is_definition(body[index - 1]):
            wanted = 2
        elif _is_import(body[index - 1]) and not _is_import(statement) and not statement.leading_lines:
            wanted = 1
        comments = [line for line in statement.leading_lines if line.comment is not None]
        if wanted is not None and not comments:
            statement = statement.with_changes(leading_lines=[cst.EmptyLine()] * wanted)
        spaced.append(statement)
    return module.with_changes(body=spaced)
