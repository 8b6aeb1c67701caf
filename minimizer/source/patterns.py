"""What scripts write, recognized: `torch.compile` and a call of it, a literal value, a line that binds one name."""

from __future__ import annotations

import libcst as cst
import libcst.matchers as m

__all__ = ["TORCH_COMPILE", "TORCH_COMPILE_CALL", "assigned_name", "is_literal"]


# `torch.compile` as the script spells it (`torch.compile(f)`, `@torch.compile`), and a call of it.
TORCH_COMPILE = m.Attribute(value=m.Name("torch"), attr=m.Name("compile"))
TORCH_COMPILE_CALL = m.Call(func=TORCH_COMPILE)


_NUMBER = m.Integer() | m.Float() | m.Imaginary()
_LITERAL = (
    _NUMBER | m.UnaryOperation(expression=_NUMBER) | m.SimpleString() | m.ConcatenatedString() | m.FormattedString()
    | m.Name("None") | m.Name("True") | m.Name("False") | m.Ellipsis()
)
# Tuples and lists of plain values (`(2, 3)`) are shapes, not tensors.
_LITERAL_COLLECTION = m.Tuple() | m.List() | m.Dict() | m.Set()


def is_literal(node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a plain value written out: a number, string, True/False/None, or a collection of them."""

    if m.matches(node, _LITERAL):
        return True
    if m.matches(node, _LITERAL_COLLECTION):
        return all(is_literal(element.value) for element in getattr(node, "elements", ()) if hasattr(element, "value"))
    return False


def assigned_name(line: cst.CSTNode) -> str | None:
    """``x`` for a line ``x = ...`` (one target, a plain name), else ``None``."""

    one = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])
    return line.body[0].targets[0].target.value if m.matches(line, one) else None  # type: ignore[attr-defined]
