"""Self-test of a Triton fused residual-add + scale kernel, comparing every layer's output through a lambda.

Written for the corpus of check shapes (issue 46): assert all(close(o, r) for o, r in zip(...)) with close
a lambda around torch.allclose. The kernel adds the residual twice. Runs under Triton's interpreter on CPU.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse

import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def residual_scale_kernel(x_ptr, res_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    res = tl.load(res_ptr + offs, mask=mask)
    out = res + alpha * x
    out = out + res
    tl.store(out_ptr + offs, out, mask=mask)


def residual_scale(x, res, alpha):
    out = torch.empty_like(x)
    n = x.numel()
    residual_scale_kernel[(triton.cdiv(n, 16),)](x, res, out, n, alpha, BLOCK=16)
    return out


def layer_outputs(widths, alpha, fused):
    torch.manual_seed(0)
    outs = []
    for width in widths:
        x = torch.randn(4, width, device=DEVICE)
        res = torch.randn(4, width, device=DEVICE)
        outs.append(residual_scale(x, res, alpha) if fused else res + alpha * x)
    return outs


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--alpha", type=float, default=0.5)
    args = parser.parse_args()
    widths = [8, 12, 20]
    close = lambda a, b: torch.allclose(a, b, atol=1e-6)
    fused = layer_outputs(widths, args.alpha, fused=True)
    reference = layer_outputs(widths, args.alpha, fused=False)
    assert all(close(o, r) for o, r in zip(fused, reference)), "residual_scale disagrees with torch"


if __name__ == "__main__":
    main()
