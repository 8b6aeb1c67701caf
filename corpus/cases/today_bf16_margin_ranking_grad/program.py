"""Pairwise reranker calibration in bfloat16: item scores sit on a 1/64 grid, trained with a margin loss.

The score table is a bfloat16 parameter whose values are multiples of 1/64 (the scores are exported to a
quantized index). One calibration step computes ``margin_ranking_loss`` over preference pairs with a Python
float margin, compiled, and its gradient is compared to eager for every batch of pairs.

Upstream: https://github.com/pytorch/pytorch/issues/185517 (CPU Inductor: the backward of
``F.margin_ranking_loss`` with bf16 inputs and a float margin gives zero gradient at the boundary where eager
gives a non-zero one, because the scalar margin is promoted differently; closed upstream, still fires on
2.13.0).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class CalibrationConfig:
    items: int = 8
    margin: float = 1.7
    batches: tuple = (
        ((0, 1), (2, 3), (4, 5)),
        ((6, 7), (0, 3)),
    )


class ScoreTable(nn.Module):
    def __init__(self, items):
        super().__init__()
        grid = torch.tensor([109, 0, 109, 0, 80, 10, 109, 0][:items], dtype=torch.float32) / 64
        self.scores = nn.Parameter(grid.to(torch.bfloat16))

    def forward(self, pairs):
        winners = self.scores[pairs[:, 0]]
        losers = self.scores[pairs[:, 1]]
        return winners, losers


def ranking_loss(winners, losers, margin):
    target = torch.ones_like(winners)
    return F.margin_ranking_loss(winners, losers, target, margin=margin, reduction="mean")


def gradients(config: CalibrationConfig, loss_fn):
    table = ScoreTable(config.items)
    grads = []
    for batch in config.batches:
        table.zero_grad()
        pairs = torch.tensor(batch)
        winners, losers = table(pairs)
        loss = loss_fn(winners, losers, config.margin)
        loss.backward()
        grads.append(table.scores.grad.clone())
    return grads


def main():
    torch.manual_seed(0)
    config = CalibrationConfig()
    compiled_loss = torch.compile(ranking_loss)
    expected = gradients(config, ranking_loss)
    actual = gradients(config, compiled_loss)
    for index, (e, a) in enumerate(zip(expected, actual)):
        print(f"batch {index}: eager grad {e.tolist()}\n         compiled grad {a.tolist()}")
        torch.testing.assert_close(a, e)


if __name__ == "__main__":
    main()
