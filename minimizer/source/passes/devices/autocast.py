"""Autocast made explicit: `torch.set_autocast_enabled('cpu', True)` goes, and the tensors the script makes are
made in the dtype autocast computed in: `torch.ones(1, 1)` -> `torch.ones(1, 1, dtype=torch.bfloat16)`.

A script that runs its model under `torch.autocast` gets a lower-precision tensor from the first operator autocast
casts (a convolution, a matmul); the operator that shows the bug then works in that dtype. The repro needs the
dtype, not autocast, nor the operator that produced it: with the inputs made in the dtype, the producing operator
can be bypassed like any other (`silu(conv1d(x, w))` -> `silu(x)`), and the repro states the dtype it fails in.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.traversal import find_all

__all__ = ["autocast_to_dtypes"]

# What autocast computes in where the script names no dtype (torch's defaults per device type).
_DEFAULT_DTYPE = {"cpu": "bfloat16", "cuda": "float16"}
_FACTORIES = ("ones", "zeros", "randn", "rand", "empty", "full")
_FACTORY = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.OneOf(*(m.Name(name) for name in _FACTORIES))))
_ENABLE = m.SimpleStatementLine(body=[m.Expr(value=m.Call(
    func=m.Attribute(value=m.Name("torch"), attr=m.Name("set_autocast_enabled")),
    args=[m.Arg(value=m.SimpleString()), m.Arg(value=m.Name("True"))],
))])
_AUTOCAST = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name("autocast")))
# Operators autocast runs in the lower precision (torch's CPU and CUDA lists, the common ones).
_CASTING_OPS = (
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "linear", "matmul", "mm",
    "bmm", "addmm", "baddbmm", "addbmm", "prelu",
)
_CASTING = m.Call(func=m.Attribute(attr=m.OneOf(*(m.Name(name) for name in _CASTING_OPS))))


def autocast_to_dtypes(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one autocast removed (a `torch.set_autocast_enabled(device, True)` statement, or a
    `with torch.autocast(device, ...)` of one item, its body kept), and every torch factory call that names no
    dtype given autocast's (its `dtype=`, else the device's default: bfloat16 on the CPU, float16 on CUDA):
    alone, then with each call of an operator autocast casts for (`conv1d(x, w)`, `linear`, `matmul`, ...) read
    as its first operand. Only where the script sets no other autocast dtype."""

    if find_all(module, m.Call(func=m.Attribute(attr=m.Name("set_autocast_dtype") | m.Name("set_autocast_cpu_dtype")))):
        return iter(())
    factories = [call for call in find_all(module, _FACTORY) if not any(_is_keyword(arg, "dtype") for arg in call.args)]
    candidates = []
    for line in find_all(module, _ENABLE):
        dtype = _DEFAULT_DTYPE.get(line.body[0].value.args[0].value.value.strip("'\""))
        if dtype is not None:
            candidates.append((line, cst.RemovalSentinel.REMOVE, dtype))
    for block in find_all(module, m.With(items=[m.WithItem(item=_AUTOCAST, asname=None)])):
        dtype = _dtype_of(block.items[0].item)
        if dtype is not None and isinstance(block.body, cst.IndentedBlock):
            candidates.append((block, cst.FlattenSentinel(block.body.body), dtype))
    # Typed inputs cost tokens; the operator autocast cast them for can go at once (the candidate is then smaller).
    casting = [None, *(call for call in find_all(module, _CASTING) if call.args and call.args[0].keyword is None)]
    return distinct_candidates(module, (
        lambda site=site, by=by, dtype=dtype, op=op: replace_nodes(
            module, {site: by, **_given(factories, dtype), **({op: op.args[0].value} if op is not None else {})}
        )
        for site, by, dtype in candidates for op in casting
    ))


def _dtype_of(autocast: cst.Call) -> str | None:
    """The dtype a `torch.autocast(...)` call computes in, where the source says it."""

    for arg in autocast.args:
        if _is_keyword(arg, "dtype"):
            return arg.value.attr.value if m.matches(arg.value, m.Attribute(value=m.Name("torch"))) else None
        if _is_keyword(arg, "enabled"):
            return None
    device = autocast.args[0].value if autocast.args and autocast.args[0].keyword is None else None
    return _DEFAULT_DTYPE.get(device.value.strip("'\"")) if isinstance(device, cst.SimpleString) else None


def _given(factories: list[cst.Call], dtype: str) -> dict:
    typed = cst.Arg(
        keyword=cst.Name("dtype"), value=cst.parse_expression(f"torch.{dtype}"),
        equal=cst.AssignEqual(whitespace_before=cst.SimpleWhitespace(""), whitespace_after=cst.SimpleWhitespace("")),
    )
    return {
        call: call.with_changes(args=[
            *(arg.with_changes(comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))) for arg in call.args), typed,
        ])
        for call in factories
    }


def _is_keyword(arg: cst.Arg, name: str) -> bool:
    return arg.keyword is not None and arg.keyword.value == name
