"""Train a small regression MLP whose hidden layers run our fused bias + tanh-GELU Triton kernel.

The kernel replaces ``F.gelu(x + b, approximate="tanh")`` in every hidden layer (forward only; the backward is
PyTorch's). After a short AdamW run on synthetic data the script checks, on a fresh batch of hidden
activations, that the fused kernel still agrees with the PyTorch reference. Runs under Triton's interpreter on CPU.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import math
import time
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@dataclass
class Config:
    in_features: int = 12
    hidden: int = 32
    depth: int = 3
    out_features: int = 2
    samples: int = 96
    batch: int = 32
    steps: int = 12
    lr: float = 3e-3
    weight_decay: float = 1e-2
    warmup: int = 3
    seed: int = 0
    log_every: int = 4


@triton.jit
def bias_gelu_tanh_kernel(x_ptr, b_ptr, out_ptr, n_elements, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_elements
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(b_ptr + offs % n_cols, mask=mask, other=0.0)
    y = x + b
    inner = 0.7978845608028654 * (y + 0.0044715 * y * y * y)
    e = tl.exp(-2.0 * tl.abs(inner))
    t = (1.0 - e) / (1.0 + e)
    t = tl.where(inner < 0, -t, t)
    tl.store(out_ptr + offs, 0.5 * y * (1.0 + t), mask=mask)


def fused(x, bias, block=128):
    x = x.contiguous()
    out = torch.empty_like(x)
    n = x.numel()
    bias_gelu_tanh_kernel[(triton.cdiv(n, block),)](x, bias, out, n, x.shape[-1], BLOCK=block)
    return out


def reference(x, bias):
    return F.gelu(x + bias, approximate="tanh")


class FusedBiasGelu(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, bias):
        ctx.save_for_backward(x, bias)
        return fused(x, bias)

    @staticmethod
    def backward(ctx, grad):
        x, bias = ctx.saved_tensors
        with torch.enable_grad():
            y = (x + bias).detach().requires_grad_()
            (dy,) = torch.autograd.grad(reference(y, 0.0), y, grad)
        return dy, dy.sum(0)


class Hidden(nn.Module):
    def __init__(self, fan_in, fan_out):
        super().__init__()
        self.linear = nn.Linear(fan_in, fan_out, bias=False)
        self.bias = nn.Parameter(torch.zeros(fan_out).uniform_(-0.5, 0.5))

    def forward(self, x):
        return FusedBiasGelu.apply(self.linear(x), self.bias)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        widths = [cfg.in_features] + [cfg.hidden] * cfg.depth
        self.hidden = nn.ModuleList(Hidden(a, b) for a, b in zip(widths, widths[1:]))
        self.head = nn.Linear(cfg.hidden, cfg.out_features)

    def forward(self, x, return_hidden=False):
        pre = []
        for layer in self.hidden:
            pre.append(layer.linear(x))
            x = layer(x)
        out = self.head(x)
        return (out, pre) if return_hidden else out


def make_dataset(cfg):
    g = torch.Generator().manual_seed(cfg.seed + 1)
    x = torch.randn(cfg.samples, cfg.in_features, generator=g)
    w = torch.randn(cfg.in_features, cfg.out_features, generator=g) / math.sqrt(cfg.in_features)
    y = torch.tanh(x @ w) + 0.05 * torch.randn(cfg.samples, cfg.out_features, generator=g)
    return x, y


def batches(x, y, batch, generator):
    order = torch.randperm(len(x), generator=generator)
    for start in range(0, len(x), batch):
        idx = order[start:start + batch]
        yield x[idx], y[idx]


def lr_at(step, cfg):
    if step < cfg.warmup:
        return cfg.lr * (step + 1) / cfg.warmup
    progress = (step - cfg.warmup) / max(1, cfg.steps - cfg.warmup)
    return cfg.lr * 0.5 * (1.0 + math.cos(math.pi * progress))


def train(model, x, y, cfg):
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    g = torch.Generator().manual_seed(cfg.seed + 2)
    step, started = 0, time.perf_counter()
    while step < cfg.steps:
        for xb, yb in batches(x, y, cfg.batch, g):
            for group in opt.param_groups:
                group["lr"] = lr_at(step, cfg)
            loss = F.mse_loss(model(xb), yb)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            if step % cfg.log_every == 0:
                print(f"step {step:3d}  lr {lr_at(step, cfg):.2e}  loss {loss.item():.4f}")
            step += 1
            if step >= cfg.steps:
                break
    print(f"trained {step} steps in {time.perf_counter() - started:.1f}s")
    return loss.item()


def kernel_matches(x, bias) -> bool:
    return torch.allclose(fused(x, bias), reference(x, bias), atol=1e-5, rtol=1e-4)


def main():
    cfg = Config()
    torch.manual_seed(cfg.seed)
    model = MLP(cfg)
    x, y = make_dataset(cfg)
    final = train(model, x, y, cfg)
    print(f"final train loss {final:.4f}")
    with torch.no_grad():
        _, pre = model(x[: cfg.batch], return_hidden=True)
    layer = model.hidden[-1]
    assert kernel_matches(pre[-1], layer.bias.detach()), "fused bias+GELU kernel drifted from F.gelu"
    print("kernel ok")


if __name__ == "__main__":
    main()
