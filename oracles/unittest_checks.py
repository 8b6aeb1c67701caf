"""A ``unittest.TestCase`` assertion read as the plain ``assert`` it spells.

``self.assertTrue(torch.allclose(out, ref))`` checks what ``assert torch.allclose(out, ref)`` checks;
``self.assertEqual(a, b)`` what ``assert a == b`` does. The capture reads a failed test's assertion this way (its
signature then names the check as an assert's would), and the source pass that lifts a test's body out of its
class writes the same spelling: one table for both, so the lifted assert is the same check by construction.
"""

from __future__ import annotations

import ast

__all__ = ["spelled_assertion"]

# assertX(a, b) -> `a <op> b`.
_COMPARISONS: dict[str, type[ast.cmpop]] = {
    "assertEqual": ast.Eq, "assertNotEqual": ast.NotEq, "assertLess": ast.Lt, "assertLessEqual": ast.LtE,
    "assertGreater": ast.Gt, "assertGreaterEqual": ast.GtE, "assertIs": ast.Is, "assertIsNot": ast.IsNot,
    "assertIn": ast.In, "assertNotIn": ast.NotIn,
}
# assertX(a) -> `a <op> None`.
_NONE_CHECKS: dict[str, type[ast.cmpop]] = {"assertIsNone": ast.Is, "assertIsNotNone": ast.IsNot}
_ONE_OPERAND = ("assertTrue", "assertFalse", *_NONE_CHECKS)


def spelled_assertion(call: ast.expr) -> ast.Assert | None:
    """The ``assert`` that ``call`` (``<case>.assertX(...)``) spells, its message kept (given positionally after
    the operands or as ``msg=``); ``None`` for any other call, or an assertion with no plain spelling here
    (``assertAlmostEqual``, ``assertRaises``, starred arguments)."""

    if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
        return None
    method = call.func.attr
    arity = 1 if method in _ONE_OPERAND else 2
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg != "msg" for k in call.keywords):
        return None
    operands, messages = call.args[:arity], call.args[arity:] + [k.value for k in call.keywords]
    if len(operands) != arity or len(messages) > 1:
        return None
    test = _test(method, operands)
    return ast.Assert(test=test, msg=messages[0] if messages else None) if test is not None else None


def _test(method: str, operands: list[ast.expr]) -> ast.expr | None:
    if method == "assertTrue":
        return operands[0]
    if method == "assertFalse":
        return ast.UnaryOp(op=ast.Not(), operand=operands[0])
    if method in _NONE_CHECKS:
        return ast.Compare(left=operands[0], ops=[_NONE_CHECKS[method]()], comparators=[ast.Constant(None)])
    if method in _COMPARISONS:
        return ast.Compare(left=operands[0], ops=[_COMPARISONS[method]()], comparators=[operands[1]])
    return None
