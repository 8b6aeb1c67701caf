"""Remove statements that only produce output: prints, logging, warnings, bare strings.

Prints and logging only produce output, which the oracle does not look at.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_nodes
from minimizer.source.traversal import find_all

__all__ = ["remove_prints_and_logging"]

_LOGGER_NAMES = frozenset({"logging", "logger", "log", "_logger", "_log", "LOGGER", "LOG", "LOGGING"})


def remove_prints_and_logging(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` without statements that only produce output, or nothing.

    Such statements are calls to `print`, to `logging.*`, `logger.*`, `log.*` (also through
    `logging.getLogger(...)`), to `warnings.warn`, and expression statements that are a bare string (docstrings)
    or f-string. The first
    candidate removes all of them, then each is removed alone, in source order. Emptied blocks get `pass`.
    """
    return distinct_candidates(module, _output_candidates(module))


def _output_candidates(module: cst.Module) -> Iterator[cst.Module]:
    statements = list(find_all(module, m.Expr(value=m.MatchIfTrue(_only_produces_output))))
    if len(statements) > 1:
        yield remove_nodes(module, statements)
    for statement in statements:
        yield remove_nodes(module, [statement])


_PRINT = m.Call(func=m.Name("print"))
_WARN = m.Call(func=m.Attribute(value=m.Name("warnings"), attr=m.Name("warn")))
_FSTRING = m.FormattedString() | m.SimpleString() | m.ConcatenatedString()


def _only_produces_output(expression: cst.BaseExpression) -> bool:
    if m.matches(expression, _PRINT | _WARN | _FSTRING):
        return True
    return m.matches(expression, m.Call(func=m.Attribute())) and _root_name(expression.func) in _LOGGER_NAMES


def _root_name(expression: cst.BaseExpression) -> str | None:
    """`logging` for `logging.getLogger(__name__).info`: the name a chain of attributes and calls starts from."""
    while m.matches(expression, m.Attribute() | m.Call()):
        expression = expression.value if m.matches(expression, m.Attribute()) else expression.func
    return expression.value if m.matches(expression, m.Name()) else None
