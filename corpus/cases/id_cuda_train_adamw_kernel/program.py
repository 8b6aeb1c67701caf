"""Train a SwiGLU feed-forward regressor on the GPU with our fused SwiGLU Triton kernel, then re-check the kernel.

Each block projects to ``2 * hidden`` features (gate and up halves side by side) and the kernel computes
``silu(gate) * up`` in one pass; the backward is PyTorch's. After an AdamW run with a linear warmup on synthetic
data, a helper compares the kernel with the unfused expression on the block's own projections.
Needs an NVIDIA GPU.
"""

import math
import time
from dataclasses import dataclass, field

import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

DEVICE = "cuda"


@dataclass
class TrainConfig:
    features: int = 16
    width: int = 32
    hidden: int = 48
    blocks: int = 2
    samples: int = 512
    batch: int = 64
    epochs: int = 3
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup_steps: int = 4
    seed: int = 0
    betas: tuple = field(default=(0.9, 0.95))


@triton.jit
def swiglu_kernel(h_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n_rows * n_cols
    row = offs // n_cols
    col = offs % n_cols
    gate = tl.load(h_ptr + row * 2 * n_cols + col, mask=mask, other=0.0).to(tl.float32)
    up = tl.load(h_ptr + row * n_cols + n_cols + col, mask=mask, other=0.0).to(tl.float32)
    out = gate * tl.sigmoid(gate) * up
    tl.store(out_ptr + offs, out, mask=mask)


def fused_swiglu(h, block=256):
    h = h.contiguous()
    rows, n_cols = h.numel() // h.shape[-1], h.shape[-1] // 2
    out = torch.empty(*h.shape[:-1], n_cols, device=h.device, dtype=h.dtype)
    swiglu_kernel[(triton.cdiv(rows * n_cols, block),)](h, out, rows, n_cols, BLOCK=block)
    return out


def swiglu_reference(h):
    gate, up = h.chunk(2, dim=-1)
    return F.silu(gate) * up


class SwiGLUFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, h):
        ctx.save_for_backward(h)
        return fused_swiglu(h)

    @staticmethod
    def backward(ctx, grad):
        (h,) = ctx.saved_tensors
        with torch.enable_grad():
            leaf = h.detach().requires_grad_()
            (dh,) = torch.autograd.grad(swiglu_reference(leaf), leaf, grad)
        return dh


class SwiGLUBlock(nn.Module):
    def __init__(self, width, hidden):
        super().__init__()
        self.norm = nn.RMSNorm(width)
        self.proj_in = nn.Linear(width, 2 * hidden)
        self.proj_out = nn.Linear(hidden, width)

    def forward(self, x):
        return x + self.proj_out(SwiGLUFn.apply(self.proj_in(self.norm(x))))


class Regressor(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Linear(cfg.features, cfg.width)
        self.blocks = nn.ModuleList(SwiGLUBlock(cfg.width, cfg.hidden) for _ in range(cfg.blocks))
        self.out = nn.Linear(cfg.width, 1)

    def forward(self, x):
        x = self.embed(x)
        for block in self.blocks:
            x = block(x)
        return self.out(x).squeeze(-1)


def synthetic_regression(cfg):
    g = torch.Generator().manual_seed(cfg.seed + 7)
    x = torch.randn(cfg.samples, cfg.features, generator=g)
    y = (x[:, :4].prod(-1) + torch.sin(x[:, 4:8]).sum(-1)) / 2 + 0.05 * torch.randn(cfg.samples, generator=g)
    return x.to(DEVICE), y.to(DEVICE)


def warmup_then_decay(cfg, total):
    def factor(step):
        if step < cfg.warmup_steps:
            return (step + 1) / cfg.warmup_steps
        return max(0.1, 1.0 - (step - cfg.warmup_steps) / max(1, total - cfg.warmup_steps))
    return factor


def train(model, x, y, cfg):
    steps_per_epoch = math.ceil(len(x) / cfg.batch)
    opt = torch.optim.AdamW(model.parameters(), lr=cfg.lr, betas=cfg.betas, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, warmup_then_decay(cfg, cfg.epochs * steps_per_epoch))
    g = torch.Generator(device=DEVICE).manual_seed(cfg.seed)
    for epoch in range(cfg.epochs):
        started, total = time.perf_counter(), 0.0
        order = torch.randperm(len(x), generator=g, device=DEVICE)
        for i in range(steps_per_epoch):
            idx = order[i * cfg.batch:(i + 1) * cfg.batch]
            loss = F.mse_loss(model(x[idx]), y[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
            sched.step()
            total += loss.item()
        print(f"epoch {epoch}: loss {total / steps_per_epoch:.4f} lr {sched.get_last_lr()[0]:.2e} "
              f"({time.perf_counter() - started:.2f}s)")


def kernel_matches(h) -> bool:
    return torch.allclose(fused_swiglu(h), swiglu_reference(h), atol=1e-5, rtol=1e-4)


def main():
    cfg = TrainConfig()
    torch.manual_seed(cfg.seed)
    model = Regressor(cfg).to(DEVICE)
    x, y = synthetic_regression(cfg)
    train(model, x, y, cfg)
    block = model.blocks[0]
    with torch.no_grad():
        h = block.proj_in(block.norm(model.embed(x[: cfg.batch])))
    assert kernel_matches(h), "fused SwiGLU kernel disagrees with silu(gate) * up"
    print("swiglu kernel ok")


if __name__ == "__main__":
    main()
