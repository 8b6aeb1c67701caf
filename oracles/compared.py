"""What a failing comparison of a Triton kernel's output compares: the ``[compared: ...]`` part of a signature.

A script that checks its own kernel against a torch reference (``assert_close(ours, torch.softmax(x, -1))``)
fails the same assert when a reduction replaces the reference by its input (``assert_close(ours, x)``): the
message stays "Tensor-likes are not close!", yet the bug is gone. Unlike a compiled call, a kernel has no
eager twin that would fail too, so the comparison itself must be pinned: each operand is described by where its
value comes from, a kernel that wrote it (``kernel row_softmax_kernel``) or every torch operation that computes it
(``add+mean+mult+mult+pow+rsqrt``, following the script's assignments and its own functions' returns down to
the tensors the kernel was given), and which kernel outputs it reads (``mult of kernel k``). Reductions keep
those (inlining, renaming and shrinking do not change them); bypassing any operation of the reference, or
feeding it the kernel's output, does.
"""

from __future__ import annotations

import ast
import collections
import dataclasses
import hashlib
import re
import sys
from dataclasses import dataclass
from types import FrameType
from typing import Any

from oracles.kernel_writes import KernelWrites
from oracles.operation_names import operator_name
from oracles.tensor_bytes import tensor_bytes

_DEPTH = 24
# Methods that move, convert or reshape a tensor without computing anything (`out.cpu()` computes what `out`
# does), and factories (inputs, however they are drawn): not operations of the comparison.
_LOOKED_THROUGH = frozenset(
    {"cpu", "cuda", "to", "float", "double", "half", "bfloat16", "detach", "clone", "contiguous", "numpy", "item"}
    | {"tolist", "view", "reshape", "flatten"}
    | {"randn", "rand", "randint", "randn_like", "rand_like", "randint_like", "randperm", "normal", "manual_seed"}
    | {"zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like", "arange"}
    | {"linspace", "tensor", "as_tensor", "from_numpy", "eye"}
)


def compared_operands(
    tree: ast.Module, statement: ast.stmt, frame: FrameType, writes: KernelWrites, callee: FrameType | None = None
) -> str | None:
    """``"kernel k, softmax"``: the origin of each operand of the comparison ``statement`` of ``tree`` that failed
    (see ``innermost_statement``).

    ``callee``: the frame of the function the failing line called (``assert_close``), whose first arguments are
    the operands' values. A kernel's output that differs from the other operand in elements the kernel never
    wrote is marked (``kernel k, differing where it did not write``): a launch that covers only part of its
    output (its sizes shrunk apart from the tensor's) fails the comparison on uninitialized memory, which is
    not the kernel's bug.
    """

    operands = _operands_of(statement)
    if not operands:
        return None
    scope = _scope_of(tree, statement)
    origins = Origins(tree, frame, writes)
    values = _values(operands, frame, callee)
    described = []
    for i, operand in enumerate(operands):
        # The value itself first: `assert_close(rms_norm(x), ...)` compares what the kernel wrote inside.
        kernel = writes.writer_of(values[i]) if len(values) == len(operands) else None
        described.append(f"kernel {kernel}" if kernel is not None else origins.of(operand, scope, statement.lineno))
    if len(values) == 2:
        for i, value in enumerate(values):
            if described[i].startswith("kernel ") and differs_where_unwritten(value, values[1 - i], writes):
                described[i] += ", differing where it did not write"
    return ", ".join(described)


def compared_values(statement: ast.stmt, frame: FrameType, callee: FrameType | None = None) -> str | None:
    """A digest of the values the failing comparison ``statement`` compared (each operand's dtype, shape and
    bytes), or ``None`` where they cannot be told or are too large to hash cheaply. Two runs with the same digest
    compared exactly the same numbers (see ``oracles.script.same_comparison``)."""

    values = _compared(statement, frame, callee)
    return digest_of(values) if values is not None else None


def compared_difference(statement: ast.stmt, frame: FrameType, callee: FrameType | None = None) -> str | None:
    """How the two values the failing comparison ``statement`` compared differ, digested
    (``oracles.comparison.difference_digest``), or ``None`` (see ``oracles.script.same_difference``)."""

    from oracles.comparison import difference_digest

    values = _compared(statement, frame, callee)
    return difference_digest(tuple(values)) if values is not None else None


def _compared(statement: ast.stmt, frame: FrameType, callee: FrameType | None) -> list | None:
    operands = _operands_of(statement)
    values = _values(operands, frame, callee) if operands else []
    if operands and len(values) != len(operands):
        values = [_evaluated(operand, frame) for operand in operands]
    if not values or any(value is _UNTOLD for value in values):
        return None
    return values


def digest_of(values: list | tuple) -> str | None:
    """A digest of ``values``' dtypes, shapes and bytes (``None`` where one cannot be told cheaply)."""

    digest = hashlib.sha1()
    for value in values:
        described = value_bytes(value)
        if described is None:
            return None
        digest.update(described)
    return digest.hexdigest()[:12]


_MOST_BYTES_HASHED = 64 * 2**20
_UNTOLD = object()


def _evaluated(operand: ast.expr, frame: FrameType) -> Any:
    """``operand``'s value, computed again in the failing frame (``x.max() + x.clamp(0).sum()`` compared by
    ``torch.allclose``, whose arguments no Python frame holds), where that runs nothing of the script's: no call
    of a name (a function of the script) nor a launch (``k[grid](...)``), only methods and library functions."""

    calls = [node.func for node in ast.walk(operand) if isinstance(node, ast.Call)]
    if any(not isinstance(func, ast.Attribute) or isinstance(func.value, ast.Subscript) for func in calls):
        return _UNTOLD
    try:
        return eval(compile(ast.Expression(operand), "<operand>", "eval"), frame.f_globals, dict(frame.f_locals))  # noqa: S307
    except Exception:  # noqa: BLE001 - not told, never a new failure
        return _UNTOLD


def value_bytes(value: Any) -> bytes | None:
    torch = sys.modules.get("torch")
    if torch is None or not isinstance(value, torch.Tensor):
        return repr(value).encode() if isinstance(value, (int, float, bool, str, list, tuple)) else None
    if value.numel() * value.element_size() > _MOST_BYTES_HASHED:
        return None
    header = f"{value.dtype} {tuple(value.shape)}|".encode()
    try:
        return header + tensor_bytes(value)  # its elements in order, as a flat copy has them
    except (RuntimeError, TypeError):  # a layout with no plain bytes (sparse, quantized): not told
        return None


def _values(operands: list[ast.expr], frame: FrameType, callee: FrameType | None) -> list[Any]:
    """The operands' values: the called function's first arguments, else the failing frame's names."""

    if callee is not None:
        code = callee.f_code
        names = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
        if len(names) >= len(operands):
            return [callee.f_locals.get(name) for name in names[: len(operands)]]
    if all(isinstance(operand, ast.Name) for operand in operands):
        return [_frame_value(frame, o.id) for o in operands]  # type: ignore[attr-defined]
    return []


def _frame_value(frame: FrameType, name: str) -> Any:
    return frame.f_locals.get(name, frame.f_globals.get(name))


def marked_where_unwritten(operands: tuple, values: tuple, writes: KernelWrites) -> tuple:
    """``operands`` (``oracles.comparison.Operand``), a kernel's output marked where it differs from the other
    value on elements the kernel did not write: the run's reading of a comparison, as ``compared_operands``
    is the text's."""

    if len(values) != 2 or writes is None:
        return operands
    return tuple(
        dataclasses.replace(o, origin=f"{o.origin}, differing where it did not write")
        if o.origin.startswith("kernel ") and differs_where_unwritten(values[i], values[1 - i], writes) else o
        for i, o in enumerate(operands)
    )


def differs_where_unwritten(value: Any, other: Any, writes: KernelWrites) -> bool:
    """Whether ``value``, a kernel's output, differs from ``other`` on elements no kernel wrote."""

    unchanged = writes.unchanged_elements(value)
    if unchanged is None or not bool(unchanged.any()):
        return False
    torch = sys.modules["torch"]
    try:
        # A reference of fewer elements broadcast over the output (`[1]` against `[2]`) is compared with every
        # element, the unwritten ones too.
        theirs = torch.broadcast_to(torch.as_tensor(other).detach().to(device=value.device, dtype=value.dtype), value.shape)
        mine = value.detach().reshape(-1)[unchanged]
        return not bool(torch.isclose(mine, theirs.reshape(-1)[unchanged], equal_nan=True).all())
    except Exception:  # noqa: BLE001 - not two tensors alike: nothing to tell
        return False


def innermost_statement(tree: ast.Module, lineno: int) -> ast.stmt | None:
    """The smallest statement of ``tree`` that spans line ``lineno``."""

    found = None
    for node in ast.walk(tree):
        if isinstance(node, ast.stmt) and node.lineno <= lineno <= (node.end_lineno or node.lineno):
            if found is None or node.lineno >= found.lineno and (node.end_lineno or 0) <= (found.end_lineno or 0):
                found = node
    return found


def _operands_of(statement: ast.stmt) -> list[ast.expr]:
    """The compared expressions: the first two arguments of ``assert_close(a, b)`` / ``assert torch.allclose(a,
    b)``, or both sides of ``assert a == b``."""

    if isinstance(statement, ast.Assert):
        test = statement.test
        while isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand
        if isinstance(test, ast.Compare):
            return [test.left, *test.comparators]
    elif isinstance(statement, ast.Expr):
        test = statement.value
    else:
        return []
    if isinstance(test, ast.Call):
        return [arg for arg in test.args[:2] if not isinstance(arg, ast.Starred)]
    return []


def _scope_of(tree: ast.Module, statement: ast.stmt) -> ast.Module | ast.FunctionDef | ast.AsyncFunctionDef:
    scope: Any = tree
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _within(statement, node):
            if scope is tree or _within(node, scope):
                scope = node
    return scope


def _within(inner: ast.AST, outer: ast.AST) -> bool:
    return outer.lineno <= inner.lineno and (inner.end_lineno or 0) <= (outer.end_lineno or 0)  # type: ignore[attr-defined]


class Origins:
    """What an expression computes, statically: the torch operations it applies (a multiset, following the
    script's assignments, its own functions' returns and its own modules' ``forward`` and methods) and the
    kernels whose outputs it reads. The failing frame gives its own names' values: a tensor a kernel wrote, or
    one passed to a kernel (an input that both sides share), is where following stops. Within a function
    followed, a name passed to a launch through a parameter the kernel wrote through is that kernel's output,
    and literal arguments decide the branches they select (``model(x, fused=False)``)."""

    def __init__(self, tree: ast.Module, frame: FrameType, writes: KernelWrites):
        self.frame = frame
        self.writes = writes
        self.functions = {n.name: n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        self.classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}

    def of(self, expr: ast.expr, scope: ast.AST, before: int) -> str:
        """``"add+mean+mult+mult+pow+rsqrt"``, ``"softmax of kernel k"``, or ``"input"`` when it computes nothing."""

        ops: collections.Counter[str] = collections.Counter()
        kernels: set[str] = set()
        self._walk(expr, _Place(scope, before, True, {}), ops, kernels, 0)
        if not ops and len(kernels) == 1:
            return f"kernel {kernels.pop()}"
        described = "+".join(sorted(ops.elements())) or "input"
        return described + "".join(f" of kernel {k}" for k in sorted(kernels))

    def _walk(self, expr: ast.AST, place: _Place, ops: Any, kernels: set[str], depth: int) -> None:
        if depth > _DEPTH:
            return
        walk = lambda e, at=place: self._walk(e, at, ops, kernels, depth + 1)  # noqa: E731
        if isinstance(expr, ast.Name):
            if place.in_frame:
                value = _frame_value(self.frame, expr.id)
                kernel = self.writes.writer_of(value)
                if kernel is not None:
                    kernels.add(kernel)
                    return
                if self.writes.was_passed(value):
                    return
            assigned = _last_assignment(place.scope, expr.id, place.before, place.literals)
            if assigned is None:
                return
            kernel = None if place.in_frame else self._launch_writing(place, expr.id, assigned.lineno)
            if kernel is not None:
                kernels.add(kernel)
            else:
                walk(assigned.value, place.at(assigned.lineno))
            return
        if isinstance(expr, ast.IfExp) and (taken := _decided(expr.test, place.literals)) is not None:
            walk(expr.body if taken else expr.orelse)
            return
        if isinstance(expr, ast.Call):
            func = expr.func
            called = self._script_callable(func, place)
            if called is not None:
                function, method = called
                returned = _returned(function)
                if returned is not None:
                    entered = _Place(function, returned.lineno + 1, False, _literal_arguments(function, expr, method))
                    self._walk(returned.value, entered, ops, kernels, depth + 1)
            elif isinstance(func, ast.Attribute):
                if func.attr not in _LOOKED_THROUGH and _is_torch_operation(func.attr):
                    ops[func.attr] += 1
                walk(func.value)
            elif isinstance(func, ast.Name) and _is_torch_operation(func.id):
                ops[func.id] += 1
            for arg in [*expr.args, *(keyword.value for keyword in expr.keywords)]:
                walk(arg)
            return
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.operand, ast.Constant):
            return  # a literal: `dim=-1`
        if isinstance(expr, (ast.BinOp, ast.UnaryOp)) and (operator := operator_name(expr.op)) is not None:
            ops[operator] += 1
        if isinstance(expr, ast.Lambda):
            return
        for child in ast.iter_child_nodes(expr):
            if isinstance(child, ast.expr):
                walk(child)

    def _script_callable(self, func: ast.expr, place: _Place) -> tuple[ast.FunctionDef, bool] | None:
        """The script's own function a call runs, and whether it is a method (bound to an instance): a function
        of the script, a module of the script called (its ``forward``), or a method of one."""

        if isinstance(func, ast.Name) and func.id in self.functions:
            return self.functions[func.id], False  # type: ignore[return-value]
        if isinstance(func, ast.Attribute):
            owner = self._class_of(func.value, place)
            method = _method(owner, func.attr) if owner is not None else None
            return (method, True) if method is not None else None
        owner = self._class_of(func, place)
        if owner is None:
            return None
        method = _method(owner, "forward") or _method(owner, "__call__")
        return (method, True) if method is not None else None

    def _class_of(self, expr: ast.expr, place: _Place) -> ast.ClassDef | None:
        """The script's class whose instance ``expr`` is: ``Net(4)``, a name bound to one (in the failing frame,
        or assigned one), or ``self`` within a method of it."""

        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name):
            return self.classes.get(expr.func.id)
        if not isinstance(expr, ast.Name):
            return None
        if place.in_frame:
            value = _frame_value(self.frame, expr.id)
            if value is not None:
                return self.classes.get(type(value).__name__)
        if expr.id == "self" and isinstance(place.scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return next((c for c in self.classes.values() if place.scope in c.body), None)
        assigned = _last_assignment(place.scope, expr.id, place.before, place.literals)
        return self._class_of(assigned.value, place.at(assigned.lineno)) if assigned is not None else None

    def _launch_writing(self, place: _Place, name: str, after: int) -> str | None:
        """The kernel that a launch between line ``after`` and ``place.before`` in ``place.scope`` passes ``name``
        through a parameter it wrote through (``kernel[grid](x, out)`` with ``out_ptr`` written)."""

        for statement in _own_statements(place.scope, place.literals):
            if not after < statement.lineno < place.before:
                continue
            for node in ast.walk(statement):
                launched = _launched_kernel(node)
                # A kernel of the script the harness saw write (which is how a launch is told from a subscript).
                written = self.writes.parameters_written(launched) if launched in self.functions else set()
                if not written:
                    continue
                parameters = [a.arg for a in self.functions[launched].args.args]  # type: ignore[index]
                passed = list(zip(parameters, node.args)) + [(k.arg, k.value) for k in node.keywords]  # type: ignore[attr-defined]
                if any(p in written and isinstance(a, ast.Name) and a.id == name for p, a in passed):
                    return launched
        return None


@dataclass(frozen=True)
class _Place:
    """Where a walk reads names: the scope, the line they are read before, whether the failing frame holds their
    values, and the parameters bound to literals by the call followed into it."""

    scope: ast.AST
    before: int
    in_frame: bool
    literals: dict[str, Any]

    def at(self, before: int) -> _Place:
        return dataclasses.replace(self, before=before)


def _launched_kernel(node: ast.AST) -> str | None:
    """``k`` for a launch ``k[grid](...)``."""

    if isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) and isinstance(node.func.value, ast.Name):
        return node.func.value.id
    return None


def _method(owner: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    return next((n for n in owner.body if isinstance(n, ast.FunctionDef) and n.name == name), None)


def _literal_arguments(function: ast.FunctionDef, call: ast.Call, method: bool) -> dict[str, Any]:
    """The parameters of ``function`` that ``call`` binds to literals, its own or the defaults."""

    positional = [*function.args.posonlyargs, *function.args.args][1 if method else 0 :]
    defaults = function.args.defaults
    bound: dict[str, ast.expr] = dict(zip([a.arg for a in positional][len(positional) - len(defaults) :], defaults))
    bound.update((a.arg, d) for a, d in zip(function.args.kwonlyargs, function.args.kw_defaults) if d is not None)
    bound.update(zip([a.arg for a in positional], call.args))
    bound.update((k.arg, k.value) for k in call.keywords if k.arg is not None)
    return {name: value.value for name, value in bound.items() if isinstance(value, ast.Constant)}


def _decided(test: ast.expr, literals: dict[str, Any]) -> bool | None:
    """The truth of a branch's test that reads only a parameter bound to a literal (``fused``, ``not fused``)."""

    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        decided = _decided(test.operand, literals)
        return None if decided is None else not decided
    if isinstance(test, ast.Name) and test.id in literals:
        return bool(literals[test.id])
    return None


def _is_torch_operation(name: str) -> bool:
    """Whether ``name`` is a function of torch or a method of its tensors (``rsqrt``, ``softmax``), not a name the
    script chose (``self.query``) that a reduction may rename or inline away."""

    torch = sys.modules.get("torch")
    return torch is not None and any(hasattr(space, name) for space in (torch, torch.Tensor, torch.nn.functional))


def _own_statements(scope: ast.AST, literals: dict[str, Any] | None = None):
    """The statements of ``scope`` (compound ones and their bodies too), not those of nested functions or classes,
    nor the branch of an ``if`` that ``literals`` (parameters bound to literals) rule out."""

    def walk(statements: list[ast.stmt]):
        for statement in statements:
            yield statement
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            taken = _decided(statement.test, literals) if literals and isinstance(statement, ast.If) else None
            for field in ("body", "orelse", "finalbody", "handlers"):
                if taken is None or field == ("body" if taken else "orelse"):
                    yield from walk(getattr(statement, field, []) or [])

    return walk(scope.body)  # type: ignore[attr-defined]


def _last_assignment(
    scope: ast.AST, name: str, before: int, literals: dict[str, Any] | None = None
) -> ast.Assign | ast.AnnAssign | None:
    found = None
    for statement in _own_statements(scope, literals):
        if statement.lineno >= before or not isinstance(statement, (ast.Assign, ast.AnnAssign)):
            continue
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        if statement.value is not None and any(isinstance(t, ast.Name) and t.id == name for t in targets):
            if found is None or statement.lineno > found.lineno:
                found = statement
    return found


def _returned(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.Return | None:
    returns = [s for s in _own_statements(function) if isinstance(s, ast.Return) and s.value is not None]
    return returns[-1] if returns else None


def kernels_compared(compared: str | None) -> tuple[str, ...]:
    """The kernels whose output a reading of a failing comparison (``"kernel k, softmax of kernel b"``) names."""

    return tuple(dict.fromkeys(re.findall(r"\bkernel (\w+)", compared or "")))
