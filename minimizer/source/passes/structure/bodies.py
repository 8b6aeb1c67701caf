"""A definition's body put where it is called, as the structure passes take it there: each parameter's value at the
call, the names an assignment target binds (which must not clash with the names at the new place), and the
docstring line that stays behind.
"""

from __future__ import annotations

from typing import Iterable, Optional

import libcst as cst
import libcst.matchers as m

from minimizer.source.substitution import as_operand

__all__ = ["DOCSTRING_LINE", "PLAIN_VALUE", "bound_arguments", "target_names"]


# A statement that is only a string: a docstring.
DOCSTRING_LINE = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])
# Arguments that read the same wherever they are written: a parameter bound to one may be read any number of times.
PLAIN_VALUE = m.Name() | m.Integer() | m.Float() | m.SimpleString()


def bound_arguments(
    args: Iterable[cst.Arg], params: list[cst.Param], keyword_only: list[cst.Param], body: cst.CSTNode
) -> Optional[dict[str, cst.BaseExpression]]:
    """Each parameter's value at a call with ``args``: its argument (by position or keyword), else its default,
    as an operand (see ``as_operand``); None when a parameter has neither, an argument is starred or names no
    parameter, or an argument other than a name or a literal would be computed more than once (its parameter is
    read more than once in ``body``)."""

    args = list(args)
    if any(arg.star for arg in args):
        return None
    positional = [arg.value for arg in args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in args if arg.keyword is not None}
    if len(positional) > len(params):
        return None
    values: dict[str, cst.BaseExpression] = {}
    for i, param in enumerate([*params, *keyword_only]):
        name = param.name.value
        value = positional[i] if i < len(positional) else keywords.pop(name, param.default)
        if value is None:
            return None
        if not m.matches(value, PLAIN_VALUE) and len(m.findall(body, m.Name(name))) > 1:
            return None
        values[name] = as_operand(value)
    return None if keywords else values


def target_names(target: cst.BaseExpression) -> set[str]:
    """The plain names an assignment target binds: `x`, or the names among `a, b` / `[a, b]`."""

    parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return {part.value for part in parts if isinstance(part, cst.Name)}
