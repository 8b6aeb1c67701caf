"""Parity sweep of a gated feed-forward block, eager against torch.compile, over a table of configurations.

Written for the corpus of check shapes (issue 46): every configuration is compared and the names of those that
disagree are collected in a list the script asserts empty. Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse
import itertools
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
log = logging.getLogger("sweep")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class GatedFeedForward(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.gate = nn.Linear(dim, hidden)
        self.up = nn.Linear(dim, hidden)
        self.down = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.down(F.silu(self.gate(x)) * self.up(x))


@dataclass
class Case:
    batch: int
    dim: int
    residual: bool

    @property
    def name(self):
        return f"b{self.batch}-d{self.dim}-{'res' if self.residual else 'plain'}"


def run_case(case, seed=0):
    torch.manual_seed(seed)
    block = GatedFeedForward(case.dim, case.dim * 2).to(DEVICE)
    compiled = torch.compile(block)
    x = torch.randn(case.batch, case.dim, device=DEVICE)
    with torch.no_grad():
        expected = block(x) + (x if case.residual else 0)
        actual = compiled(x) + (x if case.residual else 0)
    return actual, expected


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--atol", type=float, default=1e-5)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    problems = []
    for batch, dim, residual in itertools.product([2, 8], [16], [False, True]):
        case = Case(batch, dim, residual)
        actual, expected = run_case(case)
        if not torch.allclose(actual, expected, atol=args.atol):
            problems.append(case.name)
            log.warning("%s: max diff %.3g", case.name, (actual - expected).abs().max().item())
    assert not problems, f"compiled block disagrees with eager: {problems}"


if __name__ == "__main__":
    main()
