"""Two compared values computed alike from two tensors: the difference a failing comparison rests on.

A check often compares numbers reduced the same way from a kernel's output and from its reference
(``math.isclose(out.exp().sum(), ref.exp().sum())``). How those two numbers differ moves with anything both sides
compute alike: drop ``scale +`` from the kernel and from the reference together and both sums move, though the
kernel still reads ``shift`` wrongly and the reference rightly. How the two tensors they were reduced from differ,
element by element, does not move. So every tensor computed from one other tensor alone (``exp``, ``sum``,
``x * 2``, ``.double()``, a number read with ``.item()``) remembers the steps from the last tensor that was not
(a kernel's output, the sum of two tensors): its *source*. A comparison of two values reached by the same steps
from two sources is told by how the sources differ, with the steps (``oracles.script.same_difference`` holds it).
"""

from __future__ import annotations

import reprlib
from typing import Any, Callable

from oracles.arguments import shallow
from oracles.comparison import difference_digest

__all__ = ["AlikeSteps"]

# Steps followed from one source at most: a longer chain is a loop's accumulation, not a check's reading.
_MOST_STEPS = 16
_MOST_TOLD = 60


class AlikeSteps:
    """Per tensor (and per number read from one), the steps that computed it from its source.

    ``written_by(tensor)``: the kernel that wrote ``tensor``, or ``None``; a kernel's output is a source, whatever
    torch operation made the tensor before the kernel wrote into it."""

    def __init__(self, written_by: Callable[[Any], str | None]):
        import torch.utils.weak

        self._written_by = written_by
        self._steps: Any = torch.utils.weak.WeakIdKeyDictionary()  # tensor -> (steps, source)

    def follow(self, name: str, func: Any, args: tuple, kwargs: dict, results: list[Any]) -> None:
        """``results`` computed by the operation ``name`` from ``args``: one tensor from one tensor continues its
        source's steps; anything else (two tensors in, several out) starts afresh, in place included."""

        inputs = [value for value in shallow(args, kwargs) if hasattr(value, "untyped_storage")]
        if len(inputs) != 1 or len(results) != 1:
            for result in results:
                self._steps.pop(result, None)
            return
        steps, source = self._of(inputs[0])
        if len(steps) < _MOST_STEPS:
            self._steps[results[0]] = ((*steps, _step(name, func, args, kwargs)), source)

    def carry_into(self, tensor: Any, number: Any) -> None:
        """``number`` read from ``tensor`` (``.item()``): one more step from the tensor's source."""

        steps, source = self._of(tensor)
        number.alike = ((*steps, "item"), source)

    def sources(self, values: tuple) -> tuple[str, tuple] | None:
        """Where two values were reached by the same steps (one at least) from a source each: the steps, and the
        two sources; else None."""

        reached = [self._reached(value) for value in values]
        if len(values) != 2 or None in reached:
            return None
        (steps, source), (other_steps, other_source) = reached  # type: ignore[misc]
        return ("+".join(steps), (source, other_source)) if steps and steps == other_steps else None

    def difference(self, values: tuple) -> str | None:
        """How two compared values differ: where both were reached by the same steps from a source each, the
        digest of how the sources differ (with the steps); otherwise, of how the values themselves differ."""

        alike = self.sources(values)
        told = difference_digest(alike[1], told=alike[0]) if alike is not None else None
        return told if told is not None else difference_digest(values)

    def _of(self, tensor: Any) -> tuple[tuple, Any]:
        if self._written_by(tensor) is not None:
            return (), tensor
        return self._steps.get(tensor, ((), tensor))

    def _reached(self, value: Any) -> tuple[tuple, Any] | None:
        if hasattr(value, "untyped_storage"):
            return self._of(value)
        return getattr(value, "alike", None)


def _step(name: str, func: Any, args: tuple, kwargs: dict) -> str:
    """``sum(dim=1)``-like: the operation (an attribute read by its attribute's name) and what it was told besides
    its tensor, short."""

    if name == "__get__":
        name = getattr(getattr(func, "__self__", None), "__name__", name)
    # reprlib: an index given as a long list is told by its first items, not copied whole on every operation.
    told = [reprlib.repr(a) for a in args if not hasattr(a, "untyped_storage")]
    told += [f"{k}={reprlib.repr(v)}" for k, v in sorted(kwargs.items()) if not hasattr(v, "untyped_storage")]
    return f"{name}({', '.join(told)[:_MOST_TOLD]})"
