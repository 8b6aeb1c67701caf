"""Turning a live exception into an ``ExceptionInfo`` (inside the candidate's process)."""

from __future__ import annotations

import ast
import copy
import re
import sys
import traceback
from pathlib import Path
from types import FrameType
from typing import Any

from oracles.api import ExceptionInfo
from oracles.compared import compared_difference, compared_operands, compared_values, innermost_statement
from oracles.kernel_writes import KernelWrites
from oracles.evidence import EvidenceRecorder
from oracles.signature import normalize_message
from oracles.stages import stage_of
from oracles.unittest_checks import spelled_assertion

_TAIL_CHARS = 2000


def exception_info(
    exc: BaseException,
    script_path: str | None = None,
    kernel_writes: KernelWrites | None = None,
    evidence: EvidenceRecorder | None = None,
) -> ExceptionInfo:
    """Describe ``exc``; for an ``AssertionError`` raised by ``script_path`` itself, include the assert's test,
    and where the script's kernels wrote tensors (``kernel_writes``), what the failing comparison compares. Where
    ``exc`` is a failed check of the script and ``evidence`` was recorded, the comparison of the suspect's values
    that failed it (``oracles.evidence``), unless the check fails for a trivial reason (``trivial_check``)."""

    cls = type(exc)
    # Named as Python's own traceback names it (the script's classes run as __main__ without a module).
    name = cls.__qualname__ if cls.__module__ in ("builtins", "__main__") else f"{cls.__module__}.{cls.__qualname__}"
    message = str(exc)
    told = unittest_failure(exc, Path(script_path).name if script_path else None)
    if told is not None:  # python shows the test's failure, as the exit's cause
        name, message, test_line = told
    assert_text = operands = compared = values = differences = None
    tensors: tuple = ()
    frame, tree, statement = _failing_statement(exc, script_path)
    if told is not None and test_line is not None and tree is not None:
        assert_text = _test_assertion(tree, innermost_statement(tree, test_line))
    if isinstance(exc, AssertionError) and frame is not None:
        if isinstance(statement, ast.Assert):
            assert_text, operands = assert_test(tree, statement), _operands(statement.test, frame)
        elif statement is not None:  # a TestCase assertion called directly
            assert_text = _test_assertion(tree, statement)
        if statement is not None and kernel_writes:
            callee = _callee_of(exc, frame)
            compared = compared_operands(tree, statement, frame, kernel_writes, callee)
            if compared is not None:  # what the compared-kernel stages read (minimizer.stages.own_kernels)
                values, tensors = compared_values(statement, frame, callee), _module_tensors(frame)
                differences = compared_difference(statement, frame, callee)
    comparison = _failing_comparison(exc, evidence, tree, statement, frame)
    if comparison is not None and comparison.kernels:
        # The run's reading names what the check compared however the script spells it: the text's reading
        # tells `assert (h - ref).abs().max() < tol` apart from the same check on `helper(x)`, whose return it
        # cannot follow, and so refuses inlining the helper.
        static, compared = compared, ", ".join(o.origin for o in comparison.operands)
        if static is None or "kernel " not in static:
            # ... and where the text's reading missed the kernel (a helper's return, `.all()`, a loop), the run
            # also knows the values it compared.
            values, differences = comparison.values, comparison.differences
            tensors = _module_tensors(frame) if frame is not None else ()
    if comparison is not None and comparison.kernels and comparison.differences is not None:
        differences = comparison.differences  # how what the output and its reference came from differ (oracles.alike)
    tail = "".join(traceback.format_exception(exc))[-_TAIL_CHARS:]
    return ExceptionInfo(
        type=name, message=message, assert_text=assert_text, stage=stage_of(exc), traceback_tail=tail, operands=operands,
        compared=compared, compared_values=values, compared_difference=differences, module_tensors=tensors,
        evidence=comparison.signature if comparison is not None else None,
        evidence_detail=comparison.describe() if comparison is not None else None,
        evidence_kind=comparison.kind if comparison is not None else None,
        evidence_origins=tuple(o.origin for o in comparison.operands) if comparison is not None else (),
        evidence_difference=comparison.difference if comparison is not None else None,
        check=failed_a_check(exc, statement, frame), message_template=message_template(statement),
    )


def message_template(statement: ast.stmt | None) -> str | None:
    """The message of a ``raise E(message)`` or ``assert test, message`` as the script spells it, where it is
    formatted: an f-string's literal parts with ``{}`` for each value, the literal of ``"...".format(...)`` or
    ``"..." % ...``; ``None`` for any other statement or message. The values formatted into a message (case
    names, counts, numbers, the keys of what failed) change as the program shrinks; the bug does not."""

    message = None
    if isinstance(statement, ast.Raise) and isinstance(statement.exc, ast.Call) and statement.exc.args:
        message = statement.exc.args[0]
    elif isinstance(statement, ast.Assert):
        message = statement.msg
    if isinstance(message, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else "{}" for part in message.values)
    if isinstance(message, ast.Call) and isinstance(message.func, ast.Attribute) and message.func.attr == "format":
        message = message.func.value
    elif isinstance(message, ast.BinOp) and isinstance(message.op, ast.Mod):
        message = message.left
    else:
        return None
    return message.value if isinstance(message, ast.Constant) and isinstance(message.value, str) else None


def _failing_comparison(
    exc: BaseException, evidence: EvidenceRecorder | None, tree: ast.Module | None, statement: ast.stmt | None,
    frame: FrameType | None,
) -> Any:
    """The comparison of the suspect's values that failed the script's check, or ``None``: no check failed, none
    was recorded, or the check fails for a trivial reason (``trivial_check``)."""

    if evidence is None or not failed_a_check(exc, statement, frame):
        return None
    test = _unnegated(_deciding_test(tree, statement)) if tree is not None else None
    comparison = evidence.failing_comparison()
    if comparison is None and frame is not None:
        comparison = _numbers_compared(evidence, test, frame)
    if comparison is not None and tree is not None and trivial_check(tree, test, frame) is not None:
        return None
    return comparison


def _failing_statement(
    exc: BaseException, script_path: str | None
) -> tuple[FrameType | None, ast.Module | None, ast.stmt | None]:
    """The script's last frame ``exc`` passed through, the script parsed, and the statement that frame ran."""

    if script_path is None:
        return None, None, None
    frame, lineno = _last_frame_in(exc, Path(script_path))
    tree = _parsed(Path(script_path)) if frame is not None else None
    return frame, tree, innermost_statement(tree, lineno) if tree is not None else None


def unittest_failure(exc: BaseException, script_name: str | None = None) -> tuple[str, str, int | None] | None:
    """For the exit of ``unittest.main()`` after failed tests: the exception type and message of the failure it
    printed last (what plain python's traceback shows), and its last line in ``script_name``; else ``None``."""

    innermost = _innermost_frame(exc) if isinstance(exc, SystemExit) else None
    program = innermost.f_locals.get("self") if innermost is not None else None
    result = getattr(program, "result", None)
    failures, errors = getattr(result, "failures", None), getattr(result, "errors", None)
    if not isinstance(failures, list) or not isinstance(errors, list) or not failures + errors:
        return None
    return printed_exception((failures or errors)[-1][1], script_name)


def _test_assertion(tree: ast.Module, statement: ast.stmt | None) -> str | None:
    """The test of the assert that ``statement``, a ``TestCase`` assertion (``self.assertTrue(ok(a, b))``), spells
    (``oracles.unittest_checks``), read as an assert's test is; ``None`` for any other statement."""

    call = statement.value if isinstance(statement, ast.Expr) else None
    assertion = spelled_assertion(call) if call is not None else None
    return assert_test(tree, assertion) if assertion is not None else None


_TRACEBACK = "Traceback (most recent call last):"
_FRAME = re.compile(r'^  File "(?P<file>[^"]+)", line (?P<line>\d+)')
# The lines unittest prints between one failure and the next, and before its summary.
_UNITTEST_SEPARATORS = ("-" * 70, "=" * 70)


def printed_exception(text: str, script_name: str | None = None) -> tuple[str, str, int | None] | None:
    """The exception a printed traceback (the last one in ``text``) ends with: its type, its message, and the
    last line of the file named ``script_name`` among its frames; ``None`` if ``text`` holds no traceback."""

    lines = text.splitlines()
    starts = [i for i, line in enumerate(lines) if line.startswith(_TRACEBACK)]
    if not starts:
        return None
    last_line_in_script = None
    i = starts[-1] + 1
    while i < len(lines) and (lines[i].startswith(" ") or not lines[i]):
        frame = _FRAME.match(lines[i])
        if frame and script_name is not None and Path(frame["file"]).name == script_name:
            last_line_in_script = int(frame["line"])
        i += 1
    if i >= len(lines):
        return None
    head, _, first = lines[i].partition(": ")
    rest = lines[i + 1 :]
    # unittest.main() prints its summary after the last failure's traceback: not part of the failure.
    rest = rest[: next((k for k, line in enumerate(rest) if line in _UNITTEST_SEPARATORS), len(rest))]
    message = "\n".join([first, *rest]) if first or rest else ""
    return head.strip(), message.strip(), last_line_in_script


# Modules whose functions raise when a check fails: the check is the script's, made through them.
_CHECKERS = ("torch.testing", "numpy.testing", "unittest")


def failed_a_check(exc: BaseException, statement: ast.stmt | None, frame: FrameType | None) -> bool:
    """Whether ``exc`` is the script's check failing, not something crashing: an exit (``sys.exit(1)``,
    ``unittest.main()``), an ``assert`` or ``raise`` of the script, or a checker's AssertionError
    (``assert_close``, ``np.testing``, a ``TestCase`` assertion)."""

    if isinstance(exc, SystemExit):
        return True
    innermost = _innermost_frame(exc)
    if innermost is None:
        return False
    if innermost is frame:
        return isinstance(statement, (ast.Assert, ast.Raise))
    module = innermost.f_globals.get("__name__", "") or ""
    return isinstance(exc, AssertionError) and module.startswith(_CHECKERS)


def trivial_check(tree: ast.Module, test: ast.expr | None, frame: FrameType | None) -> str | None:
    """Why the check that failed compares nothing (``"a literal"``, ``"None"``, ``"a function that returns no
    value"``), or ``None``: its deciding ``test`` (``_deciding_test``, ``not`` taken off), the test an
    ``assert`` reads or that decides the ``raise`` or exit under its ``if``, is a literal, names ``None``, or
    calls a function of the script that returns nothing but falsy literals (``None``, ``False``, ``0``). A helper
    that returns ``False`` from an ``except`` and ``True`` after it says what its comparison said: whether the
    failure depends on it is the run's to tell (``oracles.deciding``)."""

    if isinstance(test, ast.Constant):
        return "a literal"
    if isinstance(test, ast.Name) and frame is not None:
        if frame.f_locals.get(test.id, frame.f_globals.get(test.id, _MISSING)) is None:
            return "None"
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name):
        function = next(
            (n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == test.func.id),
            None,
        )
        if function is not None and not _may_return_truth(function):
            return "a function that returns no true value"
    return None


def _deciding_test(tree: ast.Module, statement: ast.stmt | None) -> ast.expr | None:
    """The test that decides whether ``statement`` fails the check: an ``assert``'s own, or the innermost ``if``
    around a ``raise`` or an exit (``True`` where none guards it: it fails whatever was compared, unless it
    re-raises from an ``except``); ``None`` where that cannot be told (``unittest.main()``)."""

    if isinstance(statement, ast.Assert):
        return statement.test
    if not isinstance(statement, ast.Raise) and not _exits(statement):
        return None
    around = [
        node for node in ast.walk(tree)
        if isinstance(node, (ast.If, ast.ExceptHandler)) and node is not statement
        and any(inner is statement for inner in ast.walk(node))
    ]
    innermost = max(around, key=lambda node: node.lineno, default=None)
    if isinstance(innermost, ast.If):
        return innermost.test
    return None if isinstance(innermost, ast.ExceptHandler) else ast.Constant(True)


def _unnegated(test: ast.expr | None) -> ast.expr | None:
    while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    return test


def _numbers_compared(evidence: EvidenceRecorder, test: ast.expr | None, frame: FrameType) -> Any:
    """The deciding test's comparison (``not`` taken off), where it compares plain numbers that were read out of
    the suspect's tensors (``worst = max(worst, float(err))``: ``float()`` cannot return a traced number)."""

    if not isinstance(test, ast.Compare) or len(test.ops) != 1:
        return None
    values = [_evaluated_plainly(operand, frame) for operand in (test.left, *test.comparators)]
    if any(value is _MISSING for value in values):
        return None
    return evidence.compared_numbers(_SYMBOLS.get(type(test.ops[0]), "?"), tuple(values))


_SYMBOLS = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


def _evaluated_plainly(expr: ast.expr, frame: FrameType) -> Any:
    """``expr``'s value in ``frame`` where it reads names, items and attributes only (nothing runs)."""

    if any(isinstance(node, (ast.Call, ast.Lambda, ast.NamedExpr)) for node in ast.walk(expr)):
        return _MISSING
    try:
        return eval(compile(ast.Expression(expr), "<test>", "eval"), frame.f_globals, dict(frame.f_locals))  # noqa: S307
    except Exception:  # noqa: BLE001 - not told
        return _MISSING


def _exits(statement: ast.stmt | None) -> bool:
    """``sys.exit(1)``, ``exit(1)``, ``os._exit(1)``."""

    if not isinstance(statement, ast.Expr) or not isinstance(statement.value, ast.Call):
        return False
    func = statement.value.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    return name in ("exit", "_exit", "quit")


def _may_return_truth(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether ``function`` may return a true value, in its own body (not nested functions'): it returns
    something that is not a literal, or a true literal (falling off its end returns ``None``)."""

    pending: list[ast.AST] = list(function.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return) and node.value is not None:
            if not isinstance(node.value, ast.Constant) or node.value.value:
                return True
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            return True
        pending.extend(ast.iter_child_nodes(node))
    return False


def _innermost_frame(exc: BaseException) -> FrameType | None:
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame


_MOST_TENSORS = 64


def _module_tensors(frame: FrameType) -> tuple:
    """``(name, shape, dtype, device, requires_grad)`` of each tensor the module of the failing ``frame`` held
    (``minimizer.stages.own_kernels`` tries each assignment as a factory of its shape)."""

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
    """The source of the test of the ``assert`` statement of ``script`` that spans line ``lineno`` (or of the one
    a ``TestCase`` assertion there spells), as the harness reads it (``exception_info``)."""

    tree = _parsed(script)
    statement = innermost_statement(tree, lineno) if tree is not None else None
    if tree is None or statement is None:
        return None
    return assert_test(tree, statement) if isinstance(statement, ast.Assert) else _test_assertion(tree, statement)


def assert_test(tree: ast.Module, statement: ast.Assert) -> str:
    """The source of an assert's test. A test that only calls a helper of the script that returns one expression
    (``assert outputs_match(out, ref)`` with ``return torch.allclose(out, ref)``) reads as that expression on the
    call's arguments: the helper inlined, as a reduction inlines it, is the same check."""

    test = statement.test
    helper = _returning_helper(tree, test)
    if helper is None:
        return ast.unparse(test)
    parameters, returned = helper
    bound = dict(zip(parameters, test.args))  # type: ignore[attr-defined]

    class _Bind(ast.NodeTransformer):
        def visit_Name(self, node: ast.Name) -> ast.AST:
            return bound.get(node.id, node) if isinstance(node.ctx, ast.Load) else node

    return ast.unparse(_Bind().visit(copy.deepcopy(returned)))  # a copy: the transformer edits in place


def _returning_helper(tree: ast.Module, test: ast.expr) -> tuple[list[str], ast.expr] | None:
    """A module-level, undecorated function of plain parameters, each given by position, whose body is one
    ``return`` of a value: its parameters and that value."""

    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name)) or test.keywords:
        return None
    if any(isinstance(a, ast.Starred) for a in test.args):
        return None
    function = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == test.func.id), None)
    if function is None or function.decorator_list:
        return None
    arguments = function.args
    if arguments.posonlyargs or arguments.vararg or arguments.kwonlyargs or arguments.kwarg:
        return None
    body = function.body[1:] if ast.get_docstring(function) is not None else function.body
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return None
    parameters = [a.arg for a in arguments.args]
    return (parameters, body[0].value) if len(parameters) == len(test.args) else None


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
        # Names that differ only in their numbers (`step0`, `step1`) name one thing, failing once per step.
        return repr(sorted({normalize_message(v) for v in value}))
    return None
