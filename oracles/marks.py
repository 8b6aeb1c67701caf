"""What an operation adds to the origin of its result beyond its arguments' suspects (``oracles.evidence``): the
operation a kernel's output went into (``then mul``), and a suspect's value broadcast over more elements than
it has (``spread``)."""

from __future__ import annotations

from typing import Any

from oracles.comparison import THEN
from oracles.operation_names import ELEMENT_WISE, NUMBERS, operation_name
from oracles.settings import named_operation


def then_operation(name: str, func: Any, args: tuple, kwargs: dict, origin: frozenset) -> frozenset:
    """``then mul``: a kernel's output went into an operation that computes something. A value computed from
    it is not that output (a repro once scaled and shifted a kernel's output a second time: the same origin
    otherwise, a bug the kernel's fix no longer mends)."""

    operation = None if name in NUMBERS else named_operation(name, func, args, kwargs)
    if operation is None or not any(o.startswith("kernel ") for o in origin):
        return frozenset()
    return frozenset({THEN + operation})


def spreads_a_suspect(name: str, args: tuple, result: Any, origin_of: Any) -> bool:
    """Whether an element-wise operation broadcast a suspect's value over more elements than it has (a kernel's
    one-column output added to two columns): the comparison then measures the broadcast, not the kernel."""

    if operation_name(name) not in ELEMENT_WISE or not hasattr(result, "numel"):
        return False
    return any(
        hasattr(a, "untyped_storage") and 0 < a.numel() < result.numel() and origin_of(a) for a in args[:2]
    )
