"""Triton kernels: a value the kernel loads becomes a constant, `tl.load(x_ptr + offsets)` -> `0.0`.

A kernel that corrupts memory (writes where autograd keeps a saved tensor, past a mask, into the wrong row)
shows it with any value written; the loads that computed the value, their pointers, masks and `other=`
arguments are then noise, and once a load is gone its offsets often go with it.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, replace_nodes
from minimizer.source.traversal import find_all

__all__ = ["constant_kernel_loads"]

_JIT = m.Attribute(value=m.Name("triton"), attr=m.Name("jit")) | m.Name("jit")
KERNEL = m.FunctionDef(decorators=[m.ZeroOrMore(), m.Decorator(decorator=_JIT | m.Call(func=_JIT)), m.ZeroOrMore()])
LOAD = m.Call(func=m.Attribute(value=m.Name("tl"), attr=m.Name("load")))


def constant_kernel_loads(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with `tl.load(...)` calls inside `@triton.jit` functions replaced by `0.0`: every load at
    once, then each alone in source order."""

    loads = [load for kernel in find_all(module, KERNEL) for load in find_all(kernel, LOAD)]
    groups = ([loads] if len(loads) > 1 else []) + [[load] for load in loads]
    return distinct_candidates(
        module, (lambda group=group: replace_nodes(module, {load: cst.Float("0.0") for load in group}) for group in groups)
    )
