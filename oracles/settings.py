"""What an operation was told to compute, beside its tensors: ``clamp(max=5)``, ``leaky_relu(negative_slope=0.1)``,
a kernel launched with ``max_bucket=6``.

An operand of a failing comparison is described by the operations that computed it (``oracles.evidence``). The
names alone let a reference drift while the kernel under test stays as it was: ``clamp(max=5)`` reduced to
``clamp(max=1)``, or ``leaky_relu(h, 0.1)`` to ``leaky_relu(h)``, still disagrees with the kernel, but the kernel's
fix no longer mends the repro. The numbers and words an operation is given are part of what it computes; where it
works (``dim``), the shapes it makes and the sizes a kernel is told (a number equal to a size or stride of one of
its tensors) are not, so inputs may still shrink.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any

from oracles.layers import layer_key
from oracles.operation_names import operation_name

# Parameters that say where an operation works or what it makes, not what it computes.
_PLACES = frozenset({
    "dim", "dims", "axis", "dim0", "dim1", "start_dim", "end_dim", "size", "sizes", "shape", "split_size",
    "split_size_or_sections", "sections", "chunks", "repeats", "start", "end", "length", "step", "index", "k",
    "dtype", "device", "layout", "memory_format", "non_blocking", "copy", "generator", "pin_memory",
    "requires_grad", "inplace", "out", "self", "input", "output_size",
})


def named_operation(name: str, func: Any, args: tuple, kwargs: dict) -> str | None:
    """``clamp(max=5)``, ``linear#<ids>``: the operation, what it was told, and the parameters it was given
    (``oracles.layers``); ``None`` for what computes nothing (``cpu``, ``view``)."""

    operation = operation_name(name)
    if operation is None:
        return None
    settings = operation_settings(func, args, kwargs)
    return (f"{operation}({settings})" if settings else operation) + layer_key(args, kwargs)


def operation_settings(func: Any, args: tuple, kwargs: dict) -> str:
    """``max=5``: the Python numbers, booleans and strings ``func`` was given, by parameter name, in the order of
    its parameters; ``""`` for none. Numbers computed from a suspect's values (``TracedFloat``) vary with them and
    are left out."""

    from oracles.comparison import TracedFloat

    names, rest = _parameter_names(func)
    given = [(names[i] if i < len(names) else rest, value) for i, value in enumerate(args)]
    given += sorted(kwargs.items(), key=lambda item: (names.index(item[0]) if item[0] in names else len(names), item[0]))
    told = [
        f"{name}={_shown(value)}"
        for name, value in given
        if name not in _PLACES and name != "?" and _a_setting(value) and not isinstance(value, TracedFloat)
    ]
    return ", ".join(told)


def launch_settings(parameters: dict[str, Any], constexprs: set[str], divisors: frozenset[str] = frozenset()) -> str:
    """``max_bucket=6``: a kernel launch's numbers (not its ``tl.constexpr`` block sizes), less those equal to
    a size or stride of one of its tensors (``n_elements``, ``n_cols``, ``stride``), which shrink with them.

    A row length of one is told whatever it equals (``n_cols=1``): among ``divisors``, the parameters the kernel
    divides by or takes a remainder of (``offs // n_cols``), one makes the division the offset itself and the
    remainder zero, so a kernel that maps offsets to rows wrongly computes what a right one does, and a right
    line of it fails the comparison instead."""

    sizes = set()
    for value in parameters.values():
        if hasattr(value, "shape") and hasattr(value, "stride"):
            sizes |= {value.numel(), *value.shape, *value.stride()}
    told = [
        f"{name}={_shown(value)}"
        for name, value in parameters.items()
        if name not in constexprs and _a_setting(value)
        and (not (isinstance(value, int) and value in sizes) or (name in divisors and value == 1))
    ]
    return ", ".join(told)


def _a_setting(value: Any) -> bool:
    return isinstance(value, (bool, int, float, str))


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.6g}"
    return repr(value) if isinstance(value, str) else str(value)


@functools.lru_cache(maxsize=1024)
def _parameter_names(func: Any) -> tuple[tuple[str, ...], str]:
    """The positional parameter names of a torch function or ``Tensor`` method (as ``torch.overrides`` lists
    them), of a Python function otherwise, and the name of the positions past them (``*shape``; ``"?"`` where
    none is told)."""

    described = _override_signatures().get(func, func)
    try:
        parameters = list(inspect.signature(described).parameters.values())
    except (TypeError, ValueError):
        return (), "?"
    rest = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), "?")
    return tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)), rest


@functools.lru_cache(maxsize=1)
def _override_signatures() -> dict[Any, Any]:
    import torch.overrides

    return torch.overrides.get_testing_overrides()
