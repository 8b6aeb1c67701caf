"""Recorded values written as source a person reads: a tensor from its ``InputSpec``, the ``torch.compile``
call the script made, the grad and autocast modes a call ran under.

Shared by both lifts (``minimizer.graph.emit``, ``minimizer.source.lift``), which write what the harness recorded
at the failing call.
"""

from __future__ import annotations

import math
from typing import Any

import torch

from minimizer.graph.case import CompileCall, InputSpec
from minimizer.graph.prelude import SCRIPT_MODULE, imports_by_name, prelude_names

# Literal values are written out up to this many elements; larger exact tensors fall back to random ones.
MAX_LITERAL_ELEMENTS = 64


def tensor_expression(spec: InputSpec, *, grad: bool = False, device: str = "device") -> str:
    """An expression making a tensor like ``spec``: its exact values where they are recorded and few, else drawn
    at random as the spec says (``int_range``, ``positive``, ``scale``); ``device``: the expression naming a CUDA
    device (a variable the program defines)."""

    shape = shape_literal(spec.shape)
    dtype = spec.dtype
    dtype_kw = f", dtype={dtype}" if dtype != torch.float32 else ""
    device_kw = ""
    if spec.device.startswith("cuda"):
        device_kw = f", device={device}"
    elif spec.device != "cpu":
        device_kw = f", device={spec.device!r}"
    grad_kw = ", requires_grad=True" if grad else ""
    if spec.values is not None and len(spec.values) <= MAX_LITERAL_ELEMENTS:
        values = _nested(list(spec.values), spec.shape)
        return f"torch.tensor({values_literal(values)}, dtype={dtype}{device_kw}{grad_kw})"
    if dtype == torch.bool:
        return f"torch.randint(0, 2, {shape}{device_kw}).bool()"
    if not (dtype.is_floating_point or dtype.is_complex):
        low, high = spec.int_range or (0, 1)
        return f"torch.randint({low}, {high + 1}, {shape}{dtype_kw}{device_kw})"
    sizes = ", ".join(str(d) for d in spec.shape) if spec.shape else "()"
    draw = "torch.rand" if spec.positive else "torch.randn"
    if spec.scale is None or spec.positive:
        return f"{draw}({sizes}{dtype_kw}{device_kw}{grad_kw})"
    scaled = f"{draw}({sizes}{dtype_kw}{device_kw}) * {spec.scale!r}"
    return f"({scaled}).requires_grad_()" if grad else scaled


def float_literal(value: float) -> str:
    """``value`` as Python source: ``repr`` but for infinities and NaN, which it spells as bare names."""

    if math.isnan(value):
        return 'float("nan")'
    if math.isinf(value):
        return 'float("inf")' if value > 0 else '-float("inf")'
    return repr(value)


def values_literal(values: Any) -> str:
    """Nested lists of numbers as Python source (``float_literal`` for each float)."""

    if isinstance(values, list):
        return "[" + ", ".join(values_literal(v) for v in values) + "]"
    return float_literal(values) if isinstance(values, float) else repr(values)


def compile_keywords(call: CompileCall, prelude: str) -> tuple[list[str], set[str]]:
    """The keywords of the script's ``torch.compile`` call (``backend=...``, ``mode=...``, ...), and the modules
    they need imported. A backend the prelude binds (imported by name, or the script's own, carried) is named as
    it is bound there; any other by its module."""

    parts: list[str] = []
    imports: set[str] = set()
    if call.backend != "inductor":
        module, sep, qualname = call.backend.partition(":")
        if sep and imports_by_name(prelude, module, qualname):
            parts.append(f"backend={qualname}")  # as the script imported it: `from serve_backend import serve`
        elif module == SCRIPT_MODULE and qualname.partition("(")[0] in prelude_names(prelude):
            parts.append(f"backend={qualname}")  # the script's own (or its factory's call), carried in the prelude
        elif sep:
            imports.add(module)
            parts.append(f"backend={module}.{qualname}")
        else:
            parts.append(f"backend={call.backend!r}")
    if call.mode not in (None, "default"):
        parts.append(f"mode={call.mode!r}")
    if call.fullgraph:
        parts.append("fullgraph=True")
    if call.dynamic is not None:
        parts.append(f"dynamic={call.dynamic!r}")
    if call.options:
        parts.append(f"options={call.options!r}")
    return parts, imports


def nameable(call: CompileCall) -> bool:
    """Whether a lifted program can write the call's backend: not a closure made inside a function (one made by
    a top-level factory from literals is recorded as that factory's call)."""

    return "<locals>" not in call.backend


def mode_lines(grad_enabled: bool, autocast: tuple[str, ...] | list[str]) -> list[str]:
    """The lines that put the program in the grad and autocast modes a call ran under (``cpu:bfloat16``)."""

    lines = [] if grad_enabled else ["torch.set_grad_enabled(False)"]
    for device, dtype in (entry.split(":") for entry in autocast):
        lines.append(f"torch.set_autocast_enabled({device!r}, True)")
        if str(torch.get_autocast_dtype(device)) != f"torch.{dtype}":
            lines.append(f"torch.set_autocast_dtype({device!r}, torch.{dtype})")
    return lines


def shape_literal(shape: tuple[int, ...]) -> str:
    if len(shape) == 1:
        return f"({shape[0]},)"
    return "(" + ", ".join(str(d) for d in shape) + ")"


def _nested(flat: list[Any], shape: tuple[int, ...]) -> Any:
    if not shape:
        return flat[0] if flat else 0
    if len(shape) == 1:
        return flat
    step = len(flat) // shape[0] if shape[0] else 0
    return [_nested(flat[i * step : (i + 1) * step], shape[1:]) for i in range(shape[0])]
