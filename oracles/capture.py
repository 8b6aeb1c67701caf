"""Turning a live exception into an ``ExceptionInfo`` (inside the candidate's process)."""

from __future__ import annotations

import ast
import sys
import traceback
from pathlib import Path
from types import FrameType

from oracles.api import ExceptionInfo
from oracles.compared import KernelWrites, compared_operands, compared_values, innermost_statement
from oracles.stages import stage_of

_TAIL_CHARS = 2000


def exception_info(
    exc: BaseException, script_path: str | None = None, kernel_writes: KernelWrites | None = None
) -> ExceptionInfo:
    """Describe ``exc``; for an ``AssertionError`` raised by ``script_path`` itself, include the assert's test,
    and where the script's kernels wrote tensors (``kernel_writes``), what the failing comparison compares."""

    cls = type(exc)
    # Named as Python's own traceback names it (the script's classes run as __main__ without a module).
    name = cls.__qualname__ if cls.__module__ in ("builtins", "__main__") else f"{cls.__module__}.{cls.__qualname__}"
    assert_text = operands = compared = values = None
    tensors: tuple = ()
    if isinstance(exc, AssertionError) and script_path is not None:
        frame, lineno = _last_frame_in(exc, Path(script_path))
        tree = _parsed(Path(script_path)) if frame is not None else None
        statement = innermost_statement(tree, lineno) if tree is not None else None
        if isinstance(statement, ast.Assert):
            assert_text, operands = ast.unparse(statement.test), _operands(statement.test, frame)
        if statement is not None and kernel_writes:
            callee = _callee_of(exc, frame)
            compared = compared_operands(tree, statement, frame, kernel_writes, callee)
            if compared is not None:  # what the compared-kernel stages read (minimizer.stages.reduce)
                values, tensors = compared_values(statement, frame, callee), _module_tensors(frame)
    tail = "".join(traceback.format_exception(exc))[-_TAIL_CHARS:]
    return ExceptionInfo(
        type=name, message=str(exc), assert_text=assert_text, stage=stage_of(exc), traceback_tail=tail, operands=operands,
        compared=compared, compared_values=values, module_tensors=tensors,
    )


_MOST_TENSORS = 64


def _module_tensors(frame: FrameType) -> tuple:
    """``(name, shape, dtype, device, requires_grad)`` of each tensor the module of the failing ``frame`` held
    (``minimizer.stages.reduce`` tries each assignment as a factory of its shape)."""

    torch = sys.modules.get("torch")
    if torch is None:
        return ()
    found = []
    for name, value in list(frame.f_globals.items()):
        if isinstance(value, torch.Tensor) and not name.startswith("__") and value.layout == torch.strided:
            found.append((name, list(value.shape), str(value.dtype), value.device.type, bool(value.requires_grad)))
        if len(found) == _MOST_TENSORS:
            break
    return tuple(found)


def _last_frame_in(exc: BaseException, script: Path) -> tuple[FrameType | None, int]:
    found: tuple[FrameType | None, int] = (None, 0)
    tb = exc.__traceback__
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == script:
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _callee_of(exc: BaseException, frame: FrameType) -> FrameType | None:
    """The frame of the function that ``frame``'s failing line called (``assert_close``), if the exception
    came through one."""

    tb = exc.__traceback__
    while tb is not None:
        if tb.tb_frame is frame:
            return tb.tb_next.tb_frame if tb.tb_next is not None and tb.tb_next.tb_frame is not frame else None
        tb = tb.tb_next
    return None


def assert_test_at(script: Path, lineno: int) -> str | None:
    """The source of the test of the ``assert`` statement of ``script`` that spans line ``lineno``."""

    tree = _parsed(script)
    statement = innermost_statement(tree, lineno) if tree is not None else None
    return ast.unparse(statement.test) if isinstance(statement, ast.Assert) else None


def _parsed(script: Path) -> ast.Module | None:
    try:
        return ast.parse(script.read_text())
    except (OSError, SyntaxError, ValueError):
        return None


_MISSING = object()
_OPERANDS_CHARS = 300


def _operands(test: ast.expr, frame: FrameType) -> str | None:
    """``name=value`` for each name the test reads whose value names what failed: a string, or a collection of
    strings (a dict by its keys). Numbers and tensors say how far apart things are, which a reduction changes;
    names (of the losses, layers or ops a check found wrong) say which thing, which it must not."""

    # A name read only to take something from it (`info["attached"]`, `report.ok`, `check(x)`) is not an operand.
    containers = {
        id(n.value) for n in ast.walk(test) if isinstance(n, (ast.Subscript, ast.Attribute))
    } | {id(n.func) for n in ast.walk(test) if isinstance(n, ast.Call)}
    described = []
    for name in sorted({n.id for n in ast.walk(test) if isinstance(n, ast.Name) and id(n) not in containers}):
        value = frame.f_locals.get(name, frame.f_globals.get(name, _MISSING))
        text = _naming_value(value)
        if text is not None:
            described.append(f"{name}={text}")
    return "; ".join(described)[:_OPERANDS_CHARS] or None


def _naming_value(value: object) -> str | None:
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, dict):
        value = list(value)
    if isinstance(value, (list, tuple, set, frozenset)) and value and all(isinstance(v, str) for v in value):
        return repr(sorted(set(value)))
    return None
