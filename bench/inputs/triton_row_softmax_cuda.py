"""Fused attention-score softmax as a Triton kernel, checked against torch before a training run (CUDA).

The corpus case `triton_row_softmax` with its tensors on the GPU and no interpreter, for checking on the GPU
machine that a kernel comparison reduces to the same bug there (docs/history.md, GPU part).

Written for the corpus (not an upstream report): the kernel loads masked-out lanes as 0 instead of -inf, so rows
shorter than the block get their tail counted in the normalizer. Runs on CUDA.
"""

import argparse
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn
import triton
import triton.language as tl

log = logging.getLogger("attn")


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * row_stride + offsets, mask=mask, other=0.0)
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * row_stride + offsets, numerator / denominator, mask=mask)


def row_softmax(x: torch.Tensor) -> torch.Tensor:
    rows, cols = x.shape
    out = torch.empty_like(x)
    block = triton.next_power_of_2(cols)
    row_softmax_kernel[(rows,)](x, out, x.stride(0), cols, BLOCK=block)
    return out


@dataclass
class AttentionConfig:
    heads: int = 2
    dim: int = 8
    tokens: int = 6
    scale: float = 0.5


class Scores(nn.Module):
    def __init__(self, config: AttentionConfig):
        super().__init__()
        self.query = nn.Linear(config.dim, config.dim)
        self.key = nn.Linear(config.dim, config.dim)
        self.scale = config.scale

    def forward(self, x):
        return (self.query(x) @ self.key(x).T) * self.scale


def self_test(config: AttentionConfig) -> None:
    torch.manual_seed(0)
    scores = Scores(config).cuda()
    x = torch.randn(config.tokens, config.dim, device="cuda")
    with torch.no_grad():
        logits = scores(x)
    ours = row_softmax(logits)
    expected = torch.softmax(logits, dim=-1)
    log.warning("max diff %.3g", (ours - expected).abs().max().item())
    torch.testing.assert_close(ours, expected)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=6)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    self_test(AttentionConfig(tokens=args.tokens))


if __name__ == "__main__":
    main()
