"""RMSNorm as a Triton kernel inside a small decoder block, checked against torch before training starts.

Written for the corpus (not an upstream report): the kernel's load mask is ``cols <= n_cols`` where it should be
``cols < n_cols``, so each row's mean square also counts one element past the row (the next row's first, or
whatever lies past the tensor). Runs under Triton's interpreter on CPU.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import logging
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

log = logging.getLogger("decoder")


@triton.jit
def rms_norm_kernel(x_ptr, weight_ptr, out_ptr, row_stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols <= n_cols
    x = tl.load(x_ptr + row * row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    weight = tl.load(weight_ptr + cols, mask=mask, other=0.0)
    mean_square = tl.sum(x * x, axis=0) / n_cols
    normed = x / tl.sqrt(mean_square + eps)
    tl.store(out_ptr + row * row_stride + cols, normed * weight, mask=cols < n_cols)


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    shape = x.shape
    x = x.reshape(-1, shape[-1]).contiguous()
    out = torch.empty_like(x)
    rows, cols = x.shape
    rms_norm_kernel[(rows,)](x, weight, out, x.stride(0), cols, eps, BLOCK=triton.next_power_of_2(cols))
    return out.reshape(shape)


def rms_norm_reference(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


@dataclass
class DecoderConfig:
    dim: int = 12
    hidden: int = 32
    heads: int = 2
    seq: int = 5
    batch: int = 2
    eps: float = 1e-6
    lr: float = 1e-3


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x):
        return rms_norm(x, self.weight, self.eps)


class Attention(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.heads = config.heads
        self.qkv = nn.Linear(config.dim, 3 * config.dim, bias=False)
        self.proj = nn.Linear(config.dim, config.dim, bias=False)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k, v = (t.view(batch, seq, self.heads, dim // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(dim // self.heads)
        out = F.softmax(scores, dim=-1) @ v
        return self.proj(out.transpose(1, 2).reshape(batch, seq, dim))


class DecoderBlock(nn.Module):
    def __init__(self, config: DecoderConfig):
        super().__init__()
        self.attn_norm = RMSNorm(config.dim, config.eps)
        self.attn = Attention(config)
        self.mlp_norm = RMSNorm(config.dim, config.eps)
        self.mlp = nn.Sequential(nn.Linear(config.dim, config.hidden), nn.SiLU(), nn.Linear(config.hidden, config.dim))

    def forward(self, x):
        x = x + self.attn(self.attn_norm(x))
        return x + self.mlp(self.mlp_norm(x))


def check_norm(block: DecoderBlock, x: torch.Tensor) -> None:
    """The fused norm must match torch's before any step is taken."""

    norm = block.attn_norm
    with torch.no_grad():
        norm.weight.copy_(torch.linspace(0.5, 1.5, norm.weight.numel()))
        ours = norm(x)
        expected = rms_norm_reference(x, norm.weight, norm.eps)
    log.warning("rms norm max diff %.3g", (ours - expected).abs().max().item())
    torch.testing.assert_close(ours, expected, rtol=1e-4, atol=1e-4)


def train(config: DecoderConfig, steps: int) -> None:
    torch.manual_seed(0)
    block = DecoderBlock(config)
    x = torch.randn(config.batch, config.seq, config.dim)
    check_norm(block, x)
    optimizer = torch.optim.AdamW(block.parameters(), lr=config.lr)
    for step in range(steps):
        loss = block(x).pow(2).mean()
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.info("step %d loss %.4f", step, loss.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--dim", type=int, default=12)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    train(DecoderConfig(dim=args.dim), args.steps)


if __name__ == "__main__":
    main()
