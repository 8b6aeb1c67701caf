"""Numerics regression table for a CUDA math library: remainder/fmod edge cases, eager against compiled.

A table of (operator, dividend, divisor, dtype) cases, each run eagerly and compiled on CUDA; a case fails
when the results disagree (NaN counts as equal to NaN). The suite collects problems and asserts there are
none.

Upstream: https://github.com/pytorch/pytorch/issues/194345 (on CUDA, Inductor's torch.remainder /
torch.fmod return a wrong finite value, -inf or NaN when |a / b| is large; eager CUDA, eager CPU and compiled
CPU are right). CUDA only; not verifiable on a CPU machine.
"""

from dataclasses import dataclass
from typing import Callable

import torch

DEVICE = "cuda"


@dataclass(frozen=True)
class Case:
    name: str
    fn: Callable
    a: float
    b: float
    dtype: torch.dtype = torch.float32


CASES = (
    Case("small ratio", torch.remainder, 7.5, 2.0),
    Case("negative", torch.remainder, -7.5, 2.0),
    Case("fmod small", torch.fmod, 7.5, -2.0),
    Case("huge over tiny", torch.remainder, 1e10, 1e-20),
    Case("fp16 max over eps", torch.remainder, 65504.0, 6e-8),
    Case("fmod float max", torch.fmod, 3.4e38, 1.4e-45),
    Case("bf16 near max", torch.remainder, 3.39e38, 9.2e-41, torch.bfloat16),
)


def run_case(case: Case):
    x = torch.tensor([case.a], dtype=case.dtype, device=DEVICE)
    y = torch.tensor([case.b], dtype=case.dtype, device=DEVICE)
    expected = case.fn(x, y)
    torch._dynamo.reset()
    actual = torch.compile(case.fn)(x, y)
    if not torch.allclose(actual.float(), expected.float(), rtol=1e-3, atol=1e-30, equal_nan=True):
        return f"{case.name}: eager {expected.item()!r} compiled {actual.item()!r}"
    return None


def run_suite():
    return [p for p in (run_case(c) for c in CASES) if p is not None]


if __name__ == "__main__":
    problems = run_suite()
    print(f"{len(CASES)} cases, {len(problems)} problem(s)")
    assert not problems, "\n".join(problems)
