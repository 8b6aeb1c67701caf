"""Bypass an operation a Triton kernel and its reference apply alike: with the kernel storing `x * scale + shift`
and the script comparing it with `h * scale + shift`, both sums become `shift` (or both products `x`, `h`).

A kernel is usually checked against the same formula written in torch, and its bug lies in one part of it (how
it reads `shift`). What both sides compute alike is no part of the bug, but neither side can lose it alone: the
values compared would differ for another reason. Taken from both at once, the difference between them stays
(``oracles.script.same_difference`` holds it), and a hand-written repro has neither. The loads a kernel no longer
reads go with the edit; the parameters and tensors left unused, with the passes that remove those
(``kernel_bodies_kept`` keeps the kernel's other lines: the line a fix mends may read them).
"""

from __future__ import annotations

from typing import Callable, Iterator, Optional

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.kernels.memory import KERNEL, LOAD, STORE
from minimizer.source.substitution import as_operand
from minimizer.source.traversal import find_all, parent_map

__all__ = ["bypass_alike_operators", "kernel_bodies_kept"]

_Path = tuple[str, ...]


def bypass_alike_operators(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one operator bypassed, to the same side, in an expression of a `@triton.jit` kernel
    and in an expression outside the kernels (at any depth) written with the same operators in the same places (operands
    aside, and an operand of the kernel may be an expression outside it); the loads the kernel then reads no more removed. Pairs in source order, outer operators first, the
    right operand kept before the left."""

    return distinct_candidates(module, _bypasses(module))


def kernel_bodies_kept(reduction_pass: Callable[[cst.Module], Iterator[cst.Module]]) -> Callable[[cst.Module], Iterator[cst.Module]]:
    """``reduction_pass``, its candidates that change a kernel's body left out (its parameters may go)."""

    def kept(module: cst.Module) -> Iterator[cst.Module]:
        bodies = _kernel_bodies(module)
        return (candidate for candidate in reduction_pass(module) if _kernel_bodies(candidate) == bodies)

    kept.__name__ = reduction_pass.__name__
    return kept


def _kernel_bodies(module: cst.Module) -> list[str]:
    return [module.code_for_node(kernel.body) for kernel in find_all(module, KERNEL)]


def _bypasses(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    kernels = find_all(module, KERNEL)
    # A pointer's arithmetic (`x_ptr + offs`) computes an address, not a value the reference computes too.
    addresses = {
        id(node) for kernel in kernels for call in find_all(kernel, LOAD | STORE) if call.args
        for node in find_all(call.args[0], m.BinaryOperation())
    }
    inside = [e for kernel in kernels for e in _outermost_operations(kernel) if id(e) not in addresses]
    kernel_nodes = {id(node) for kernel in kernels for node in find_all(kernel, m.BinaryOperation())}
    # Outside, any formula may be the reference, not only an outermost one: an error is measured on a reference
    # written inside it (`(out - (x * scale + shift)).abs().max()`).
    outside = [e for e in find_all(module, m.BinaryOperation()) if id(e) not in kernel_nodes]
    for kernel_side in inside:
        exactly = len(list(_operator_paths(kernel_side))) < 2
        for reference in outside:
            if not _written_alike(kernel_side, reference, exactly=exactly):
                continue
            for path in _operator_paths(kernel_side):
                for side in ("right", "left"):
                    if _drops_an_identity(reference, path, side):
                        continue
                    edits = {kernel_side: _bypassed(kernel_side, path, side), reference: _bypassed(reference, path, side)}
                    yield lambda edits=edits: _without_unread_loads(replace_nodes(module, edits))


def _outermost_operations(root: cst.CSTNode) -> list[cst.BinaryOperation]:
    parents = parent_map(root)
    return [
        node for node in find_all(root, m.BinaryOperation())
        if not isinstance(parents.get(node), cst.BinaryOperation)
    ]


def _written_alike(kernel_side: cst.BaseExpression, reference: cst.BaseExpression, *, exactly: bool) -> bool:
    """Whether ``reference`` has ``kernel_side``'s operators in the same places. Not ``exactly``, an operand of
    the kernel may stand for an expression outside it: the kernel loads `x` where the script passes it `h * 0.5`
    and its reference reads `h * 0.5 * scale + shift` (a formula of one operator, a pointer's `x_ptr + offs`,
    would pair with any sum)."""

    if not isinstance(kernel_side, cst.BinaryOperation):
        return not (exactly and isinstance(reference, cst.BinaryOperation))
    return (
        isinstance(reference, cst.BinaryOperation)
        and type(kernel_side.operator) is type(reference.operator)
        and _written_alike(kernel_side.left, reference.left, exactly=exactly)
        and _written_alike(kernel_side.right, reference.right, exactly=exactly)
    )


def _operator_paths(node: cst.BaseExpression, path: _Path = ()) -> Iterator[_Path]:
    if isinstance(node, cst.BinaryOperation):
        yield path
        yield from _operator_paths(node.left, (*path, "left"))
        yield from _operator_paths(node.right, (*path, "right"))


def _drops_an_identity(reference: cst.BaseExpression, path: _Path, side: str) -> bool:
    """Whether bypassing the operator at ``path`` to ``side`` drops an operand that changes nothing (`x * 1`,
    `x + 0`, `x / 1`): the pair then edits the kernel alone, which is no operation both sides apply alike (a
    kernel's `x * slope` in a branch its inputs no longer take went with the script's `batch * 1`, and the kernel
    came to compute the identity)."""

    for step in path:
        reference = getattr(reference, step)
    if not isinstance(reference, cst.BinaryOperation):
        return False
    dropped = reference.left if side == "right" else reference.right
    if not isinstance(dropped, (cst.Integer, cst.Float)) or dropped.lpar:
        return False
    neutral = {cst.Multiply: 1, cst.Add: 0} | ({cst.Divide: 1, cst.Subtract: 0} if side == "left" else {})
    unit = neutral.get(type(reference.operator))
    return unit is not None and float(dropped.value) == unit


def _bypassed(node: cst.BaseExpression, path: _Path, side: str) -> cst.BaseExpression:
    """``node`` with the operator at ``path`` replaced by its operand on ``side``, parenthesized where it stands
    as an operand."""

    if not path:
        kept = getattr(node, side)
        return as_operand(kept) if node.lpar else kept
    step, rest = path[0], path[1:]
    inner = _bypassed(getattr(node, step), rest, side)
    return node.with_changes(**{step: as_operand(inner) if isinstance(inner, cst.BinaryOperation) else inner})


def _without_unread_loads(module: cst.Module) -> cst.Module:
    """``module`` without the kernels' statements ``name = tl.load(...)`` whose name nothing in the kernel reads."""

    while True:
        unread = [line for kernel in find_all(module, KERNEL) for line in _unread_loads(kernel)]
        if not unread:
            return module
        module = replace_nodes(module, {line: cst.RemovalSentinel.REMOVE for line in unread})


def _unread_loads(kernel: cst.FunctionDef) -> list[cst.SimpleStatementLine]:
    unread = []
    for line in find_all(kernel, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=LOAD)])):
        name = line.body[0].targets[0].target.value  # type: ignore[attr-defined]
        if len(find_all(kernel, m.Name(name))) == 1:
            unread.append(line)
    return unread
