"""Tensors the script computed, written as a factory of what they were when it failed: `logits =
head(embed(tokens))` becomes `logits = torch.randn(1, 5)`.

A Triton kernel checked inside a model gets its input from the model's layers; what the kernel's bug needs is a
tensor of that shape, dtype and device, whatever layers made it. The shapes are the run's (the harness records
the module's tensors when the script fails, `oracles.capture`), so this works for any stack of layers, not one
layer kind at a time; the layers left unused then go with the other passes.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Iterator, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.patterns import assigned_name

__all__ = ["recorded_tensors_to_factories"]

_TORCH_FACTORY = m.Call(func=m.Attribute(value=m.Name("torch"), attr=m.Name(m.MatchIfTrue(
    lambda name: name in {"randn", "rand", "randint", "ones", "zeros", "empty", "full", "tensor", "arange"}
))))


def recorded_tensors_to_factories(recorded: Sequence[Sequence]) -> Callable[[cst.Module], Iterator[cst.Module]]:
    """The pass for one run's record: ``(name, shape, dtype, device, requires_grad)`` per module-level tensor."""

    found = {entry[0]: tuple(entry[1:]) for entry in recorded}
    return partial(_as_factories, found=found)


def _as_factories(module: cst.Module, *, found: dict[str, tuple]) -> Iterator[cst.Module]:
    """Yield `module` with one module-level assignment of a recorded tensor (assigned once, not by a factory
    already) replaced by a factory of its recorded shape, dtype and device, in source order."""

    lines = [line for line in module.body if assigned_name(line) is not None]
    assigned = [assigned_name(line) for line in lines]
    candidates = []
    for line, name in zip(lines, assigned):
        value = line.body[0].value  # type: ignore[attr-defined]
        if name in found and assigned.count(name) == 1 and not m.matches(value, _TORCH_FACTORY):
            factory = cst.parse_expression(_factory(*found[name]))
            candidates.append(lambda line=line, value=value, factory=factory: replace_node(module, value, factory))
    return distinct_candidates(module, iter(candidates))


def _factory(shape: Sequence[int], dtype: str, device: str, requires_grad: bool) -> str:
    """``torch.randn(1, 5)``, ``torch.zeros(2, dtype=torch.int64)``, ``torch.randn((), device="cuda")``."""

    size = ", ".join(str(n) for n in shape) if shape else "()"
    floating = dtype in {"torch.float32", "torch.float64", "torch.float16", "torch.bfloat16", "torch.complex64"}
    options = [] if dtype == "torch.float32" else [f"dtype={dtype}"]
    options += [] if device == "cpu" else [f'device="{device}"']
    options += ["requires_grad=True"] if requires_grad and floating else []
    return f"torch.{'randn' if floating else 'zeros'}({', '.join([size, *options])})"
