"""Turning a live exception into an ``ExceptionInfo`` (inside the candidate's process)."""

from __future__ import annotations

import ast
import traceback
from pathlib import Path

from oracles.api import ExceptionInfo
from oracles.stages import stage_of

_TAIL_CHARS = 2000


def exception_info(exc: BaseException, script_path: str | None = None) -> ExceptionInfo:
    """Describe ``exc``; for an ``AssertionError`` raised by ``script_path`` itself, include the assert's test."""

    cls = type(exc)
    # Named as Python's own traceback names it (the script's classes run as __main__ without a module).
    name = cls.__qualname__ if cls.__module__ in ("builtins", "__main__") else f"{cls.__module__}.{cls.__qualname__}"
    assert_text = _assert_text(exc, script_path) if isinstance(exc, AssertionError) else None
    tail = "".join(traceback.format_exception(exc))[-_TAIL_CHARS:]
    return ExceptionInfo(type=name, message=str(exc), assert_text=assert_text, stage=stage_of(exc), traceback_tail=tail)


def _assert_text(exc: BaseException, script_path: str | None) -> str | None:
    if script_path is None:
        return None
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if Path(f.filename) == Path(script_path)]
    if not frames or frames[-1].lineno is None:
        return None
    return assert_test_at(Path(script_path), frames[-1].lineno)


def assert_test_at(script: Path, lineno: int) -> str | None:
    """The source of the test of the ``assert`` statement of ``script`` that spans line ``lineno``."""

    try:
        tree = ast.parse(script.read_text())
    except (OSError, SyntaxError):
        return None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            return ast.unparse(node.test)
    return None
