"""A small GPT-style language model trained a few steps with torch.compile; its losses drift from eager's
(a PLANTED Inductor bug, see _planted.py).

``plant_miscompile()`` makes Inductor compute SiLU as x * sigmoid(-x); the SwiGLU feed-forward layers use
SiLU. Compiling the forward and backward of every block takes most of a run's time: this is the
compile-bound example of bench/README.md. The smallest repro is the same as planted_miscompile.py's.
"""

import copy
import math
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
plant_miscompile()


@dataclass
class Config:
    vocab: int = 96
    dim: int = 64
    heads: int = 4
    layers: int = 2
    context: int = 16
    hidden: int = 128
    dropout: float = 0.0


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        scale = torch.rsqrt(x.pow(2).mean(dim=-1, keepdim=True) + self.eps)
        return x * scale * self.weight


class Attention(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.heads = config.heads
        self.qkv = nn.Linear(config.dim, 3 * config.dim, bias=False)
        self.out = nn.Linear(config.dim, config.dim, bias=False)
        mask = torch.tril(torch.ones(config.context, config.context, dtype=torch.bool))
        self.register_buffer("mask", mask)

    def forward(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).split(dim, dim=-1)
        q = q.view(batch, seq, self.heads, -1).transpose(1, 2)
        k = k.view(batch, seq, self.heads, -1).transpose(1, 2)
        v = v.view(batch, seq, self.heads, -1).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
        scores = scores.masked_fill(~self.mask[:seq, :seq], float("-inf"))
        weights = F.softmax(scores, dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(batch, seq, dim)
        return self.out(y)


class SwiGLU(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.gate = nn.Linear(config.dim, config.hidden, bias=False)
        self.up = nn.Linear(config.dim, config.hidden, bias=False)
        self.down = nn.Linear(config.hidden, config.dim, bias=False)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.down(F.silu(self.gate(x)) * self.up(x)))


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm1 = RMSNorm(config.dim)
        self.attn = Attention(config)
        self.norm2 = RMSNorm(config.dim)
        self.mlp = SwiGLU(config)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.mlp(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.embed = nn.Embedding(config.vocab, config.dim)
        self.position = nn.Parameter(torch.zeros(config.context, config.dim))
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.norm = RMSNorm(config.dim)
        self.head = nn.Linear(config.dim, config.vocab, bias=False)
        self.head.weight = self.embed.weight  # tied embeddings
        self.apply(self._init_weights)

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, tokens, targets=None):
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        logits = self.head(self.norm(x))
        if targets is None:
            return logits
        return F.cross_entropy(logits.flatten(0, 1), targets.flatten())


def batches(config, steps, batch_size=4):
    data = torch.randint(0, config.vocab, (steps, batch_size, config.context + 1), device=device)
    for chunk in data:
        yield chunk[:, :-1], chunk[:, 1:]


def train(model, data, lr=1e-3):
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    losses = []
    for tokens, targets in data:
        loss = model(tokens, targets)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.detach())
    return torch.stack(losses)


config = Config()
model = TinyGPT(config).to(device)
reference = copy.deepcopy(model)
data = list(batches(config, steps=3))

compiled_losses = train(torch.compile(model), data)
eager_losses = train(reference, data)
print("compiled losses:", compiled_losses.tolist())
print("eager losses:   ", eager_losses.tolist())
assert torch.allclose(compiled_losses, eager_losses), "compiled training diverges from eager"
