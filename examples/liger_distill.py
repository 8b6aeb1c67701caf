"""Distilling a small transformer student with liger-kernel's fused cross-entropy (CUDA).

A real bug, not planted: liger-kernel 0.8.5's cross-entropy kernel writes the gradient into its input tensor
during the forward pass. Here its input is the output of a softmax, which autograd saved for softmax's
backward, so the student's gradients are silently wrong. Needs CUDA and liger-kernel; elsewhere it says so
and exits 0 (nothing to show).
"""

import argparse
import logging
import math
import sys
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

if not torch.cuda.is_available():
    print("liger_distill: needs CUDA (liger-kernel's kernels are Triton kernels for the GPU); skipped")
    sys.exit(0)
try:
    from liger_kernel.transformers.functional import liger_cross_entropy
except ImportError:
    print("liger_distill: needs liger-kernel (pip install liger-kernel==0.8.5); skipped")
    sys.exit(0)

log = logging.getLogger("distill")


@dataclass
class StudentConfig:
    vocab: int = 512
    dim: int = 128
    heads: int = 4
    layers: int = 2
    seq: int = 64
    batch: int = 8
    temperature: float = 2.0
    lr: float = 3e-4
    steps: int = 1


class Attention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.out(y.transpose(1, 2).reshape(b, t, d))


class Block(nn.Module):
    def __init__(self, config: StudentConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.dim)
        self.attn = Attention(config.dim, config.heads)
        self.norm2 = nn.LayerNorm(config.dim)
        self.mlp = nn.Sequential(nn.Linear(config.dim, 4 * config.dim), nn.GELU(), nn.Linear(4 * config.dim, config.dim))

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class Student(nn.Module):
    def __init__(self, config: StudentConfig):
        super().__init__()
        self.embed = nn.Embedding(config.vocab, config.dim)
        self.pos = nn.Parameter(torch.zeros(1, config.seq, config.dim))
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.norm = nn.LayerNorm(config.dim)
        self.head = nn.Linear(config.dim, config.vocab)

    def forward(self, tokens):
        x = self.embed(tokens) + self.pos[:, : tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(self.norm(x))


def distill_loss(logits, targets, temperature, loss_fn):
    # Soft predictions at the distillation temperature, scored against the teacher's hard labels.
    probs = torch.softmax(logits / temperature, dim=-1)
    return loss_fn(probs.view(-1, probs.shape[-1]), targets.view(-1)) * temperature**2


def torch_cross_entropy(input, target):
    return F.cross_entropy(input, target)


def gradients(model, tokens, targets, config, loss_fn):
    model.zero_grad()
    loss = distill_loss(model(tokens), targets, config.temperature, loss_fn)
    loss.backward()
    return loss.detach(), {name: p.grad.clone() for name, p in model.named_parameters()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = StudentConfig(steps=args.steps)
    torch.manual_seed(0)
    device = "cuda"
    student = Student(config).to(device)
    tokens = torch.randint(0, config.vocab, (config.batch, config.seq), device=device)
    teacher_labels = torch.randint(0, config.vocab, (config.batch, config.seq), device=device)
    reference_loss, reference = gradients(student, tokens, teacher_labels, config, torch_cross_entropy)
    loss, fused = gradients(student, tokens, teacher_labels, config, liger_cross_entropy)
    log.warning("loss torch %.4f liger %.4f (log vocab %.2f)", reference_loss, loss, math.log(config.vocab))
    # Relative to each gradient's own size: these gradients are small (probabilities over a 512-word vocabulary).
    worst = max(((fused[n] - reference[n]).norm() / reference[n].norm().clamp_min(1e-12)).item() for n in reference)
    assert worst < 1e-3, f"liger gradients differ from torch's (relative error {worst:.3g})"


if __name__ == "__main__":
    main()
