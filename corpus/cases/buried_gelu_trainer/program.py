"""Train a tiny sequence classifier for the edge runtime, then check it against an eager twin.

The trainer compiles the model once with the team's ``edge`` backend and calls it from its training and
evaluation loops; a learning-rate schedule, gradient clipping and early stopping run around it. At the end the
compiled model's validation loss must match the eager twin's, trained on the same batches.
"""

import argparse
import copy
import dataclasses
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

import edge_backend  # noqa: F401  (registers the "edge" backend)


@dataclasses.dataclass
class Config:
    vocab: int = 64
    width: int = 32
    heads: int = 4
    layers: int = 2
    classes: int = 5
    length: int = 12
    batch: int = 8
    epochs: int = 2
    lr: float = 3e-3
    clip: float = 1.0


class Block(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.width)
        self.attention = nn.MultiheadAttention(config.width, config.heads, batch_first=True)
        self.norm2 = nn.LayerNorm(config.width)
        self.up = nn.Linear(config.width, 4 * config.width)
        self.down = nn.Linear(4 * config.width, config.width)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attention(h, h, h, need_weights=False)[0]
        return x + self.down(F.gelu(self.up(self.norm2(x))))


class Classifier(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.embed = nn.Embedding(config.vocab, config.width)
        self.position = nn.Parameter(torch.zeros(config.length, config.width))
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.layers))
        self.head = nn.Linear(config.width, config.classes)

    def forward(self, tokens):
        x = self.embed(tokens) + self.position[: tokens.shape[1]]
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def make_batches(config, count, seed):
    generator = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(count):
        tokens = torch.randint(0, config.vocab, (config.batch, config.length), generator=generator)
        labels = tokens[:, 0] % config.classes
        batches.append((tokens, labels))
    return batches


class Trainer:
    def __init__(self, model, config, compiled):
        self.config = config
        self.model = model
        self.forward = torch.compile(model, backend="edge") if compiled else model
        self.optimizer = torch.optim.AdamW(model.parameters(), lr=config.lr)
        self.history = []

    def learning_rate(self, step, total):
        return self.config.lr * 0.5 * (1 + math.cos(math.pi * step / total))

    def train(self, batches):
        total = self.config.epochs * len(batches)
        step = 0
        for epoch in range(self.config.epochs):
            for tokens, labels in batches:
                for group in self.optimizer.param_groups:
                    group["lr"] = self.learning_rate(step, total)
                loss = F.cross_entropy(self.forward(tokens), labels)
                self.optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(self.model.parameters(), self.config.clip)
                self.optimizer.step()
                step += 1
            self.history.append(self.evaluate(batches))
            if len(self.history) > 1 and self.history[-1] > self.history[-2]:
                break

    @torch.no_grad()
    def evaluate(self, batches):
        losses = [F.cross_entropy(self.forward(tokens), labels).item() for tokens, labels in batches]
        return sum(losses) / len(losses)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=4)
    args = parser.parse_args()
    config = Config()
    torch.manual_seed(0)
    model = Classifier(config)
    twin = copy.deepcopy(model)
    train, valid = make_batches(config, args.batches, 0), make_batches(config, 2, 1)
    compiled = Trainer(model, config, compiled=True)
    eager = Trainer(twin, config, compiled=False)
    compiled.train(train)
    eager.train(train)
    compiled_loss, eager_loss = compiled.evaluate(valid), eager.evaluate(valid)
    print(f"validation loss: compiled {compiled_loss:.5f}, eager {eager_loss:.5f}")
    assert abs(compiled_loss - eager_loss) < 1e-4, "the edge build does not match eager"


if __name__ == "__main__":
    main()
