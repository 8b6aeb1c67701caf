"""Triton kernels: a value the kernel loads becomes a constant, `tl.load(x_ptr + offsets)` -> `0.0`; a mask goes,
`tl.store(out_ptr + offs, y, mask=offs < n)` -> `tl.store(out_ptr + offs, y)`.

A kernel that corrupts memory (writes where autograd keeps a saved tensor, past a mask, into the wrong row)
shows it with any value written; the loads that computed the value, their pointers, masks and `other=`
arguments are then noise, and once a load is gone its offsets often go with it. A mask that fenced the launch's
tail fences nothing once the launch covers the tensor exactly (the masks that may be a bug's line are held by
`minimizer.source.frozen.GuardedMasks`).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_nodes, replace_nodes
from minimizer.source.traversal import find_all, names_of

__all__ = ["constant_kernel_loads", "drop_kernel_masks", "one_element_blocks_as_scalars"]

_JIT = m.Attribute(value=m.Name("triton"), attr=m.Name("jit")) | m.Name("jit")
KERNEL = m.FunctionDef(decorators=[m.ZeroOrMore(), m.Decorator(decorator=_JIT | m.Call(func=_JIT)), m.ZeroOrMore()])
LOAD = m.Call(func=m.Attribute(value=m.Name("tl"), attr=m.Name("load")))
STORE = m.Call(func=m.Attribute(value=m.Name("tl"), attr=m.Name("store")))


def constant_kernel_loads(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with `tl.load(...)` calls inside `@triton.jit` functions replaced by `0.0`: every load at
    once, then each alone in source order."""

    loads = [load for kernel in find_all(module, KERNEL) for load in find_all(kernel, LOAD)]
    groups = ([loads] if len(loads) > 1 else []) + [[load] for load in loads]
    return distinct_candidates(
        module, (lambda group=group: replace_nodes(module, {load: cst.Float("0.0") for load in group}) for group in groups)
    )


def drop_kernel_masks(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the `mask` (and a load's `other`) of `tl.load` / `tl.store` calls inside `@triton.jit`
    functions dropped, by keyword or in their places (`tl.store(p, v, m)`): every one at once, then each call's
    alone in source order; with each, a mask the kernel then no longer reads (`mask = offs < n`) goes too (a mask
    that may be the bug's line is held by `GuardedMasks`, read or not)."""

    unmasked = {
        call: bare for kernel in find_all(module, KERNEL) for call in find_all(kernel, LOAD | STORE)
        if (bare := _unmasked(call)) is not None
    }
    groups = ([list(unmasked)] if len(unmasked) > 1 else []) + [[call] for call in unmasked]
    candidates = [
        lambda group=group: _without_unread_masks(replace_nodes(module, {call: unmasked[call] for call in group}))
        for group in groups
    ]
    return distinct_candidates(module, [lambda: _without_unread_masks(module), *candidates])


# `tl.arange(0, 1)`: a block of one element.
_ONE_ELEMENT = m.Call(
    func=m.Attribute(value=m.Name("tl"), attr=m.Name("arange")), args=[m.Arg(value=m.Integer("0")), m.Arg(value=m.Integer("1"))]
)


def one_element_blocks_as_scalars(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with a kernel's block of one element read as its one scalar: where `offs = tl.arange(0, 1)`
    is only ever added to a pointer (`x_ptr + offs`), the additions are their pointers and the line goes, one
    kernel at a time; a load of one element loads the same value either way (a pass over one program's one
    element, as a repro's launch ends up)."""

    return distinct_candidates(module, (lambda k=k: _scalars_in(module, k) for k in find_all(module, KERNEL)))


def _scalars_in(module: cst.Module, kernel: cst.FunctionDef) -> cst.Module | None:
    lines = find_all(kernel, m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=_ONE_ELEMENT)]))
    names = {line.body[0].targets[0].target.value for line in lines}
    one_element = _ONE_ELEMENT | m.Name(value=m.MatchIfTrue(lambda name: name in names))
    replacements: dict = {}
    named = 0  # the additions' offsets that are one of `names`
    for total in find_all(kernel, m.BinaryOperation(operator=m.Add())):
        for offsets, pointer in ((total.right, total.left), (total.left, total.right)):
            if m.matches(offsets, one_element):
                if m.matches(pointer, one_element):
                    return None  # `offs + offs`: no pointer
                replacements[total] = pointer
                named += isinstance(offsets, cst.Name)
                break
    # Each name read as an addition's offsets and nowhere else (its binding is one more occurrence of it).
    occurrences = len(find_all(kernel, m.Name(value=m.MatchIfTrue(lambda name: name in names))))
    if not replacements or named + len(lines) != occurrences:
        return None
    return replace_nodes(module, {**replacements, **{line: cst.RemovalSentinel.REMOVE for line in lines}})


_MASK_LINE = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Comparison())])


def _without_unread_masks(module: cst.Module) -> cst.Module:
    """`module` without the kernels' mask assignments that nothing reads."""

    unread = [
        line for kernel in find_all(module, KERNEL) for line in find_all(kernel, _MASK_LINE)
        if names_of(kernel, line.body[0].targets[0].target.value) == 1  # its own target alone
    ]
    return remove_nodes(module, unread) if unread else module


def _unmasked(call: cst.Call) -> cst.Call | None:
    """`call` without its mask and `other`, or None where it has neither."""

    first_masked = 1 if call.func.attr.value == "load" else 2
    kept = [
        arg for position, arg in enumerate(call.args)
        if not (arg.keyword is None and position >= first_masked)
        and not (arg.keyword is not None and arg.keyword.value in ("mask", "other"))
    ]
    if len(kept) == len(call.args) or any(arg.star for arg in call.args):
        return None
    kept[-1] = kept[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return call.with_changes(args=kept)
