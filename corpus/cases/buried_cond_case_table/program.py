"""Regression suite for the conditioning metrics of a matrix-preconditioner library, eager against torch.compile.

Each case builds its inputs, runs each of its metrics eagerly and compiled for every dtype, and records what
disagrees; the suite fails if anything does.

Upstream: https://github.com/pytorch/pytorch/issues/150114 (torch.linalg.cond of torch.arctan compiled by
Inductor gives inf where eager gives a finite number; a regression after 2.5.1).
"""

import itertools
import math
from dataclasses import dataclass, field
from typing import Callable

import torch


def squashed_condition(x):
    """Condition number of the matrix after a soft clamp of its entries."""
    return torch.linalg.cond(torch.arctan(x))


def spectral_norm(x):
    return torch.linalg.matrix_norm(torch.tanh(x), ord=2)


def frobenius(x):
    return torch.linalg.matrix_norm(x)


METRICS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "condition": squashed_condition,
    "spectral": spectral_norm,
    "frobenius": frobenius,
}


def constant(shape, dtype):
    return torch.ones(shape, dtype=dtype)


def ramp(shape, dtype):
    return torch.linspace(0.1, 1.0, math.prod(shape), dtype=dtype).reshape(shape)


def diagonal(shape, dtype):
    return torch.eye(shape[-1], dtype=dtype).expand(shape).contiguous() * 3


@dataclass
class Case:
    name: str
    shape: tuple
    make: Callable[[tuple, torch.dtype], torch.Tensor]
    metrics: list[str] = field(default_factory=lambda: list(METRICS))
    rtol: float = 1e-4


CASES = [
    Case("diagonal", (3, 3), diagonal),
    Case("ramp", (4, 4), ramp, ["spectral", "frobenius"]),
    Case("batched-ramp", (2, 3, 3), ramp, ["frobenius"]),
    Case("constant", (2, 2), constant, ["frobenius", "condition"]),
]
DTYPES = [torch.float64, torch.float32]


def check_case(case: Case, metric: str, dtype: torch.dtype) -> str | None:
    x = case.make(case.shape, dtype)
    fn = METRICS[metric]
    expected = fn(x)
    actual = torch.compile(fn)(x)
    if not torch.allclose(actual, expected, rtol=case.rtol, equal_nan=True):
        return f"{case.name}/{metric}/{dtype}: eager {expected.tolist()} compiled {actual.tolist()}"
    return None


def run_suite() -> list[str]:
    problems = []
    for case, dtype in itertools.product(CASES, DTYPES):
        for metric in case.metrics:
            problem = check_case(case, metric, dtype)
            if problem is not None:
                problems.append(problem)
    return problems


if __name__ == "__main__":
    problems = run_suite()
    print(f"{len(CASES)} cases, {len(DTYPES)} dtypes: {len(problems)} problem(s)")
    assert not problems, "compiled metrics disagree with eager:\n" + "\n".join(problems)
