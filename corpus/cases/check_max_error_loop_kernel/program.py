"""Validation of a Triton leaky-ReLU + dropout-free activation kernel over a few batches of a tabular model.

Written for the corpus of check shapes (issue 46): the maximum error is accumulated over a loop of batches and
asserted at the end. The kernel applies the slope to the positive side too. Runs under Triton's interpreter on CPU.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import logging

import torch.nn as nn
import triton
import triton.language as tl

log = logging.getLogger("tabular")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def leaky_relu_kernel(x_ptr, out_ptr, n, slope, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.where(x > -1.0, x, x * slope)
    tl.store(out_ptr + offs, y, mask=mask)


def leaky_relu(x, slope=0.1):
    out = torch.empty_like(x)
    n = x.numel()
    leaky_relu_kernel[(triton.cdiv(n, 32),)](x, out, n, slope, BLOCK=32)
    return out


class TabularNet(nn.Module):
    def __init__(self, features=10, hidden=16):
        super().__init__()
        self.fc1 = nn.Linear(features, hidden)
        self.fc2 = nn.Linear(hidden, 1)

    def forward(self, x, fused=True):
        h = self.fc1(x)
        h = leaky_relu(h) if fused else nn.functional.leaky_relu(h, 0.1)
        return self.fc2(h)


def validation_batches(count, seed):
    g = torch.Generator().manual_seed(seed)
    return [torch.randn(8, 10, generator=g).to(DEVICE) * 2 for _ in range(count)]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = TabularNet().to(DEVICE).eval()
    worst = 0.0
    with torch.no_grad():
        for i, batch in enumerate(validation_batches(args.batches, seed=7)):
            err = (model(batch) - model(batch, fused=False)).abs().max().item()
            log.info("batch %d error %.3g", i, err)
            worst = max(worst, err)
    assert worst < 1e-5, f"leaky_relu kernel error {worst:.3g} over {args.batches} batches"


if __name__ == "__main__":
    main()
