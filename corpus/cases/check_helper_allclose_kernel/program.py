"""Regression check for our fused bias + GELU Triton kernel inside a small MLP, before a training run.

Written for the corpus of check shapes (issue 46): the kernel reads the bias by row instead of by column, and
the script's check lives in a helper that returns ``torch.allclose`` of the fused and unfused model. Runs under
Triton's interpreter on CPU, on the GPU where there is one.
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

log = logging.getLogger("fused-mlp")
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def bias_gelu_kernel(x_ptr, b_ptr, out_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(b_ptr + offs // n_cols, mask=mask)
    y = x + b
    out = 0.5 * y * (1.0 + tl.math.erf(y * 0.7071067811865476))
    tl.store(out_ptr + offs, out, mask=mask)


def fused_bias_gelu(x, bias):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    bias_gelu_kernel[(triton.cdiv(n, 64),)](x, bias, out, n, x.shape[-1], BLOCK=64)
    return out


class FusedBiasGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        ctx.save_for_backward(x, bias)
        return fused_bias_gelu(x, bias)

    @staticmethod
    def backward(ctx, grad):
        x, bias = ctx.saved_tensors
        with torch.enable_grad():
            y = (x + bias).detach().requires_grad_()
            out = torch.nn.functional.gelu(y)
            (dy,) = torch.autograd.grad(out, y, grad)
        return dy, dy.sum(0)


class Block(nn.Module):
    def __init__(self, dim, fused=True):
        super().__init__()
        self.linear = nn.Linear(dim, dim, bias=False)
        self.bias = nn.Parameter(torch.randn(dim) * 0.5)
        self.fused = fused

    def forward(self, x):
        h = self.linear(x)
        if self.fused:
            return FusedBiasGelu.apply(h, self.bias)
        return torch.nn.functional.gelu(h + self.bias)


class MLP(nn.Module):
    def __init__(self, dim=16, depth=3, classes=4):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim) for _ in range(depth))
        self.head = nn.Linear(dim, classes)

    def set_fused(self, fused):
        for block in self.blocks:
            block.fused = fused

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def fused_matches_reference(model, x):
    with torch.no_grad():
        model.set_fused(True)
        fused = model(x)
        model.set_fused(False)
        reference = model(x)
        model.set_fused(True)
    return torch.allclose(fused, reference, atol=1e-4, rtol=1e-4)


def make_data(n, dim, classes, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, dim, generator=g)
    y = torch.randint(0, classes, (n,), generator=g)
    return x.to(DEVICE), y.to(DEVICE)


def train(model, x, y, steps, lr):
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    for step in range(steps):
        loss = nn.functional.cross_entropy(model(x), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        log.info("step %d loss %.4f", step, loss.item())
    return loss.item()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = MLP().to(DEVICE)
    x, y = make_data(32, 16, 4, seed=1)
    x_val, _ = make_data(8, 16, 4, seed=2)
    assert fused_matches_reference(model, x_val), "fused kernel disagrees with the PyTorch reference"
    final = train(model, x, y, args.steps, args.lr)
    print(f"final loss {final:.4f}")


if __name__ == "__main__":
    main()
