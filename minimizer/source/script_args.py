"""A script's command-line arguments written into it, so that it, and every repro made from it, runs as
``python script.py ARGS`` did with no arguments at all.

``parser.parse_args()`` (and ``parse_known_args()``) read ``sys.argv[1:]``: they are given the arguments as a
list. ``sys.argv`` read anywhere else becomes the list python would have made. A script that reads its arguments
some other way (a library's own parser) gets them set once, at its top: ``sys.argv[1:] = [...]``.
"""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

_PARSE_WITHOUT_ARGUMENTS = m.Call(
    func=m.Attribute(attr=m.Name("parse_args") | m.Name("parse_known_args")), args=[]
)
_SYS_ARGV = m.Attribute(value=m.Name("sys"), attr=m.Name("argv"))


def bake_arguments(source: str, filename: str, args: list[str] | tuple[str, ...]) -> str:
    """``source`` reading ``args`` (and ``filename`` as ``sys.argv[0]``) from its own text; ``source`` as it is
    without arguments."""

    if not args:
        return source
    module = cst.parse_module(source)
    baker = _Baker(filename, list(args))
    baked = module.visit(baker)
    if baker.replaced:
        return baked.code
    return _set_at_the_top(module, list(args)).code


def _strings(values: list[str]) -> cst.BaseExpression:
    return cst.parse_expression(_code(values))


class _Baker(cst.CSTTransformer):
    def __init__(self, filename: str, args: list[str]):
        self.filename, self.args, self.replaced = filename, args, 0
        self._assigning = 0  # inside an assignment's target: ``sys.argv = [...]`` stays as it is

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._assigning += 1

    def leave_AssignTarget(self, original: cst.AssignTarget, updated: cst.AssignTarget) -> cst.AssignTarget:
        self._assigning -= 1
        return updated

    def leave_Call(self, original: cst.Call, updated: cst.Call) -> cst.BaseExpression:
        if m.matches(original, _PARSE_WITHOUT_ARGUMENTS):
            self.replaced += 1
            return updated.with_changes(args=[cst.Arg(_strings(self.args))])
        return updated

    def leave_Attribute(self, original: cst.Attribute, updated: cst.Attribute) -> cst.BaseExpression:
        if not self._assigning and m.matches(original, _SYS_ARGV):
            self.replaced += 1
            return _strings([self.filename, *self.args])
        return updated


def _set_at_the_top(module: cst.Module, args: list[str]) -> cst.Module:
    """``import sys; sys.argv[1:] = [...]`` after the docstring and ``__future__`` imports."""

    lines = cst.parse_module(f"import sys\nsys.argv[1:] = {_code(args)}\n").body
    body = list(module.body)
    at = 0
    while at < len(body) and (_is_docstring(body[at]) or _is_future_import(body[at])):
        at += 1
    return module.with_changes(body=[*body[:at], *lines, *body[at:]])


def _code(args: list[str]) -> str:
    return "[" + ", ".join(repr(value) for value in args) + "]"


def _is_docstring(statement: cst.CSTNode) -> bool:
    return m.matches(statement, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())]))


def _is_future_import(statement: cst.CSTNode) -> bool:
    return m.matches(
        statement,
        m.SimpleStatementLine(body=[m.ImportFrom(module=m.Name("__future__"))]),
    )
