"""Nightly check of a Triton layer-scale kernel used in a vision transformer's residual branch.

Written for the corpus of check shapes (issue 46): the script prints the error and calls sys.exit(1) when it
is too large. The kernel reads the first channel's scale for every channel. Runs under Triton's interpreter on CPU.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import sys

import torch.nn as nn
import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def layer_scale_kernel(x_ptr, gamma_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask)
    gamma = tl.load(gamma_ptr + cols * 0, mask=mask)
    tl.store(out_ptr + row * n_cols + cols, x * gamma, mask=mask)


def layer_scale(x, gamma):
    rows, cols = x.shape
    out = torch.empty_like(x)
    layer_scale_kernel[(rows,)](x, gamma, out, cols, BLOCK=triton.next_power_of_2(cols))
    return out


class ResidualBranch(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.proj = nn.Linear(dim, dim)
        self.gamma = nn.Parameter(torch.linspace(0.1, 1.0, dim))

    def forward(self, x, use_kernel=True):
        h = self.proj(self.norm(x))
        return x + (layer_scale(h, self.gamma) if use_kernel else h * self.gamma)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=6)
    parser.add_argument("--dim", type=int, default=8)
    parser.add_argument("--tol", type=float, default=1e-5)
    args = parser.parse_args()
    torch.manual_seed(0)
    branch = ResidualBranch(args.dim).to(DEVICE)
    x = torch.randn(args.tokens, args.dim, device=DEVICE)
    with torch.no_grad():
        err = (branch(x) - branch(x, use_kernel=False)).abs().max().item()
    print(f"layer-scale kernel max error {err:.3g}")
    if err > args.tol:
        print("FAIL: kernel disagrees with torch", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
