"""Gated MLP language-model head trained with the team's house compiler backend.

PLANTED (see house_compiler.py): the backend's fusion pass miscompiles `a + sigmoid(b)`.
"""

import argparse
import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

from house_compiler import house_backend

log = logging.getLogger("train")


@dataclass
class ModelConfig:
    vocab: int = 50
    dim: int = 16
    hidden: int = 32
    layers: int = 2
    dropout: float = 0.0


class GatedUnit(nn.Module):
    def __init__(self, dim, hidden):
        super().__init__()
        self.value = nn.Linear(dim, hidden)
        self.gate = nn.Linear(dim, hidden)
        self.out = nn.Linear(hidden, dim)

    def forward(self, x):
        return self.out(self.value(x) * torch.sigmoid(self.gate(x)))


class Block(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.norm = nn.LayerNorm(config.dim)
        self.unit = GatedUnit(config.dim, config.hidden)
        self.skip = nn.Linear(config.dim, config.dim)
        self.drop = nn.Dropout(config.dropout)

    def forward(self, x):
        h = self.unit(self.norm(x))
        return self.drop(h) + torch.sigmoid(self.skip(x))


class Head(nn.Module):
    def __init__(self, config: ModelConfig):
        super().__init__()
        self.embed = nn.Embedding(config.vocab, config.dim)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.proj = nn.Linear(config.dim, config.vocab)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = block(x)
        return self.proj(x)


def batches(config: ModelConfig, count: int, length: int = 12):
    for _ in range(count):
        yield torch.randint(0, config.vocab, (4, length))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    config = ModelConfig()
    model = Head(config)
    compiled = torch.compile(model, backend=house_backend)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for step, tokens in enumerate(batches(config, args.steps)):
        logits = compiled(tokens[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, config.vocab), tokens[:, 1:].reshape(-1))
        with torch.no_grad():
            expected = model(tokens[:, :-1])
        torch.testing.assert_close(logits, expected, msg="house backend disagrees with eager")
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.warning("step %d loss %.3f", step, loss.item())


if __name__ == "__main__":
    main()
