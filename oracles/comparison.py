"""A comparison the script made of the suspect's values, as ``oracles.evidence`` records it, and the numbers it
follows: what a failing check compared, in a form that travels (its signature, its description for people).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Callable

from oracles.events import EVENT
from oracles.layers import is_layer, told, told_item
from oracles.tensor_bytes import tensor_bytes

COMPILED = "compiled"
# An operand that comes from no suspect: a Python number the script wrote, a tensor the suspect was given (the
# reference replaced by its input is another comparison), or any other value (the reference).
NUMBER = "number"
INPUT = "input"
OTHER = "other"
# How an origin set names an operation a suspect's value was combined with (``ours - reference``), and a
# suspect's value broadcast over more elements than it has (see ``oracles.evidence``).
AGAINST = "against "
THEN = "then "
SPREAD = "spread"
# A kernel's output combined with a value that differs from it where the kernel wrote nothing (`out - ref`, `out`
# partly `torch.ones`): what is measured then is the buffer, not the kernel.
UNWRITTEN = "unwritten"
# A kernel's output measured after going through draws its reference never read (``oracles.draws``).
THROUGH_OTHER = "through other data"
# Checks that fail on two shapes whatever the values (the others broadcast: ``spread`` tells that), and how a
# comparison of two shapes by one of them is marked.
STRICT_SHAPES = ("assert_close", "equal", "np.testing.")
UNLIKE_SHAPES = "(unlike shapes)"
MOST_BYTES_DIFFERENCED = 64 * 2**20


@dataclass(frozen=True)
class Operand:
    """One side of a comparison: its origin (``compiled``, ``kernel k``, both joined by ``+``; ``number``;
    ``other``) and what it is (``float32 [8, 4]``, ``float``)."""

    origin: str
    described: str

    @property
    def suspect(self) -> bool:
        return self.origin not in (NUMBER, INPUT, OTHER)

    @property
    def kernels(self) -> list[str]:
        """The kernels of the script its origin names (its output, or a value computed from it)."""

        return re.findall(r"\bkernel (\w+)", self.origin)


@dataclass(frozen=True)
class Comparison:
    """A comparison the script made with at least one operand from the suspect.

    ``kind``: ``allclose``, ``equal``, ``assert_close``, ``==``, ``<``, ``math.isclose``, ``requires_grad``, ...
    ``held``: whether it held (close, equal); ``None`` for an ordering (``err < tol``), whose failing side only
    the script knows. ``difference``: the largest absolute difference of two operands of one shape. ``values``:
    a digest of the operands' dtypes, shapes and bytes (``None`` where they cannot be told cheaply).
    ``differences``: a digest of how they differ, element by element (``difference_digest``).
    """

    kind: str
    operands: tuple[Operand, ...]
    held: bool | None
    difference: float | None = None
    values: str | None = None
    differences: str | None = None

    @property
    def kernels(self) -> list[str]:
        """The kernels of the script whose output it compared."""

        return [name for o in self.operands for name in o.kernels]

    @property
    def signature(self) -> str:
        """``allclose of compiled, other``: the kind and each operand's origin, what a smaller script must keep."""

        return f"{self.kind} of {', '.join(o.origin for o in self.operands)}"

    def describe(self) -> str:
        """``allclose: compares the output of the compiled call (float32 [8, 4]) with the reference (float32
        [8, 4]): max abs difference 0.21``, for people."""

        def named(operand: Operand) -> str:
            return f"{_ORIGIN_WORDS.get(operand.origin, 'the output of ' + operand.origin)} ({operand.described})"

        first, *rest = self.operands
        text = f"{self.kind}: compares {named(first)}"
        if rest:
            text += " with " + " and ".join(named(o) for o in rest)
        if self.difference is not None:
            text += f": max abs difference {self.difference:.3g}"
        return text


_ORIGIN_WORDS = {
    COMPILED: "the output of the compiled call", NUMBER: "the number", INPUT: "its input", OTHER: "the reference",
}


def origin_in_words(origin: str) -> str:
    """An operand's origin said briefly: ``the output of kernel k``, ``the reference (softmax)``."""

    head = origin.split(f" {THEN}")[0].split(f" {AGAINST}")[0].split(" of ")[0]
    if head in _ORIGIN_WORDS:
        return _ORIGIN_WORDS[head]
    if head.startswith(COMPILED):
        return _ORIGIN_WORDS[COMPILED]
    if head.startswith("kernel "):
        return f"the output of kernel {head.split()[1].partition('(')[0]}"
    return f"the reference ({head})"


# Where a TracedFloat reports its comparisons (``None``: nowhere): (symbol, operands, held, result) -> what the
# comparison comes out as (the installed recorder may make it hold).
COMPARED: list[Callable[[str, tuple, bool | None, bool], bool] | None] = [None]


class TracedFloat(float):
    """A Python float taken from a tensor (``.item()``, ``float()``), carrying its origin (the suspects it comes
    from) through arithmetic and recording its comparisons. It is a float to the script in every other way.
    ``computed``: where it comes from no suspect, the torch operations that computed it, which tell a kernel's
    reference (``ref.exp().sum().item()`` is another reference than ``x.exp().sum().item()``)."""

    origin: frozenset
    computed: frozenset

    def __new__(cls, value: float, origin: frozenset, computed: frozenset = frozenset()) -> TracedFloat:
        made = float.__new__(cls, value)
        made.origin, made.computed = origin, computed
        return made

    __hash__ = float.__hash__

    def __reduce__(self) -> tuple:
        return (float, (float(self),))


def _compare(symbol: str, method: str) -> Callable[[TracedFloat, Any], Any]:
    real = getattr(float, method)

    def compare(self: TracedFloat, other: Any) -> Any:
        result = real(self, other)
        if result is not NotImplemented and COMPARED[0] is not None:
            held = bool(result) if symbol == "==" else (not result) if symbol == "!=" else None
            return COMPARED[0](symbol, (self, other), held, result)
        return result

    return compare


def _arithmetic(method: str) -> Callable[..., Any]:
    real = getattr(float, method)

    def arithmetic(self: TracedFloat, *other: Any) -> Any:
        result = real(self, *other)
        if not isinstance(result, float):
            return result
        computed = self.computed | (other[0].computed if other and isinstance(other[0], TracedFloat) else frozenset())
        return TracedFloat(result, self.origin | (_origin_of_number(other[0]) if other else frozenset()), computed)

    return arithmetic


for _symbol, _method in (("<", "__lt__"), ("<=", "__le__"), (">", "__gt__"), (">=", "__ge__"), ("==", "__eq__"), ("!=", "__ne__")):
    setattr(TracedFloat, _method, _compare(_symbol, _method))
for _method in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__", "__rtruediv__",
                "__pow__", "__rpow__", "__abs__", "__neg__", "__pos__", "__mod__", "__floordiv__"):
    setattr(TracedFloat, _method, _arithmetic(_method))


def _origin_of_number(value: Any) -> frozenset:
    return value.origin if isinstance(value, TracedFloat) else frozenset()


def origin_text(origin: frozenset) -> str:
    """``kernel k then add+mul against leaky_relu(negative_slope=0.1)+sub``: the suspects, the operations a
    kernel's output went through (``THEN``), then what they were measured against."""

    suspects = sorted(
        told_item(o) for o in origin if not o.startswith((AGAINST, THEN, EVENT)) and o not in (SPREAD, UNWRITTEN, THROUGH_OTHER)
    )
    then = told(o.removeprefix(THEN) for o in origin if o.startswith(THEN))
    against = told(o.removeprefix(AGAINST) for o in origin if o.startswith(AGAINST))
    spread = " spread by broadcasting" if SPREAD in origin else ""
    spread += ", differing where it did not write" if UNWRITTEN in origin else ""
    spread += f" {THROUGH_OTHER}" if THROUGH_OTHER in origin else ""
    after = f" then {'+'.join(then)}" if then else ""
    return "+".join(suspects) + after + spread + (f" against {'+'.join(against)}" if against else "")


def measures_something_else(origins: list[str]) -> bool:
    """Whether a comparison measures a suspect's value against a value the suspect did not make: an operand from
    no suspect other than a number the script wrote (a reference, an input), or one it was reduced with
    (``kernel k then sub against softmax``). Two sides both computed from a kernel's output (`linear(out)`
    against `leaky_relu(out)`) measure the kernel against nothing: more of its own output is no reference."""

    return any(AGAINST in o or (o != NUMBER and not re.match(rf"(?:{COMPILED}|kernel )", o)) for o in origins)


def _kernel_parts(item: str) -> tuple[str, frozenset]:
    """``("kernel k(block=4)", {"linear", "mul"})`` for ``kernel k(block=4) of linear+mul``."""

    head, sep, operations = item.rpartition(" of ")
    return (head, frozenset(operations.split("+"))) if sep and item.startswith("kernel ") else (item, frozenset())


def launched_operations(origin: frozenset) -> frozenset:
    """The operations that computed what the kernels of ``origin`` were launched on."""

    return frozenset().union(*(_kernel_parts(o)[1] for o in origin))


def measured_operations(origin: frozenset) -> frozenset:
    """The operations that computed what ``origin``'s kernel output was measured against (``against ...``)."""

    return frozenset(o.removeprefix(AGAINST) for o in origin if o.startswith(AGAINST))


def without_common(origin: frozenset, launched: frozenset, measured: frozenset) -> frozenset:
    """``origin`` told relative to the launch: an operation both the kernel's inputs and its reference went
    through is left out of both (a `linear` before the kernel and inside the reference is the same input; one
    side dropping it leaves it on the other, another comparison); a layer the kernel's output and its reference
    both went through after it (the same parameters: ``oracles.layers``) is left out of both as well."""

    then = {o.removeprefix(THEN) for o in origin if o.startswith(THEN) and is_layer(o)}
    kept: set[str] = set()
    for item in origin:
        head, operations = _kernel_parts(item)
        if operations:
            rest = operations - measured
            kept.add(f"{head} of {'+'.join(sorted(rest))}" if rest else head)
        elif item.startswith(THEN) and item.removeprefix(THEN) in measured and is_layer(item):
            continue
        elif not (item.startswith(AGAINST) and item.removeprefix(AGAINST) in launched | then):
            kept.add(item)
    return frozenset(kept)


def spread_where_broadcast(operands: tuple, extents: list[int | None]) -> tuple:
    """The operands, a suspect's marked where it was computed over fewer elements than another tensor compared
    with it (``extents``: each operand's, ``None`` for no tensor)."""

    most = max((e for e in extents if e is not None), default=0)
    return tuple(
        Operand(f"{o.origin} spread by broadcasting", o.described)
        if o.suspect and e is not None and 0 < e < most and "spread by" not in o.origin
        else o
        for o, e in zip(operands, extents)
    )


def described(value: Any) -> str:
    """``float32 [2]``, ``float 0.25``: what an operand was."""

    if isinstance(value, (bool, int, float)):
        return f"{type(value).__name__ if not isinstance(value, TracedFloat) else 'float'} {value:.4g}"
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    if shape is not None and dtype is not None:
        return f"{str(dtype).removeprefix('torch.')} {list(shape)}"
    return type(value).__name__


def largest_difference(values: tuple) -> float | None:
    """The largest absolute difference of two numbers, or of two arrays of one shape; ``None`` otherwise."""

    if len(values) != 2:
        return None
    a, b = values
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(float(a) - float(b))
    torch = _torch()
    try:
        left, right = (torch.as_tensor(v).detach() for v in (a, b))
        if left.shape != right.shape or not left.numel() or left.numel() * 8 > MOST_BYTES_DIFFERENCED:
            return None
        return float((left.double() - right.double().to(left.device)).abs().max())
    except Exception:  # noqa: BLE001 - not two numeric arrays alike: nothing to tell
        return None


# Steps of the largest difference a difference is told in: two computations of one difference round apart by far
# less (`x * s + a - (x * s + b)` against `a - b`), two differences of another bug by far more.
_DIFFERENCE_STEPS = 2**12


def difference_digest(values: tuple, told: str = "") -> str | None:
    """A digest of how two operands of one shape differ, element by element (``a - b`` in float64, told in
    ``_DIFFERENCE_STEPS`` of its largest magnitude, with that magnitude to four digits); ``None`` where they do not
    differ or cannot be told. Two comparisons with the same digest compared values apart by the same amounts,
    whatever both sides computed alike (``oracles.script.same_difference``). ``told``: what else the digest
    holds (the steps both sides took from the two values, ``oracles.alike``)."""

    if len(values) != 2:
        return None
    torch = _torch()
    try:
        left, right = (torch.as_tensor(v).detach() for v in values)
        if left.shape != right.shape or not left.numel() or left.numel() * 8 > MOST_BYTES_DIFFERENCED:
            return None
        difference = (left.double().cpu() - right.double().cpu()).reshape(-1)
    except Exception:  # noqa: BLE001 - not two numeric arrays alike: nothing to tell
        return None
    largest = float(difference.abs().max())
    if not largest or largest != largest or largest == float("inf"):
        return None
    steps = torch.round(difference / largest * _DIFFERENCE_STEPS).to(torch.int64)
    header = f"{tuple(left.shape)} {largest:.4g} {told}|".encode()
    return hashlib.sha1(header + tensor_bytes(steps)).hexdigest()[:12]


def _torch() -> Any:
    import torch

    return torch
