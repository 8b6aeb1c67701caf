"""Evaluate a gated MLP's validation loss with a compiled forward built inside a ``torch.no_grad()`` helper.

``validation_outputs`` is decorated with ``@torch.no_grad()`` and compiles the model there (Inductor); the
training loop calls it after every epoch and the check compares its outputs with an eager forward.
"""

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
log = logging.getLogger("gated")


class GatedMLP(nn.Module):
    def __init__(self, width=6, hidden=10):
        super().__init__()
        self.gate = nn.Linear(width, hidden)
        self.value = nn.Linear(width, hidden)
        self.out = nn.Linear(hidden, width)

    def forward(self, x):
        return self.out(F.silu(self.gate(x)) * self.value(x))


@torch.no_grad()
def validation_outputs(model, inputs):
    compiled = torch.compile(model)
    return [compiled(x) for x in inputs]


def train_epoch(model, optimizer, data):
    for x, y in data:
        loss = F.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()


def main():
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = GatedMLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    data = [(torch.randn(4, 6), torch.randn(4, 6)) for _ in range(2)]
    validation = [torch.randn(3, 6)]
    for epoch in range(2):
        train_epoch(model, optimizer, data)
        outputs = validation_outputs(model, validation)
        with torch.no_grad():
            expected = [model(x) for x in validation]
        for got, want in zip(outputs, expected):
            if not torch.allclose(got, want, atol=1e-5):
                raise RuntimeError(f"epoch {epoch}: compiled validation outputs differ")
        log.info("epoch %d ok", epoch)


if __name__ == "__main__":
    main()
