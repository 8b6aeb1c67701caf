"""Mixture-of-experts router with usage bookkeeping: a custom autograd.Function counts how often the router
runs forward (a buffer updated in place in forward) and how often it runs backward (the same kind of update in
backward); a check after the forward pass compares the counters with the steps taken.

Upstream: https://github.com/pytorch/pytorch/issues/154820 (in-place updates in a custom autograd.Function's
forward and backward are reordered under torch.compile: the backward's update already happens in forward).
"""

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn

log = logging.getLogger("router")


@dataclass
class RouterConfig:
    hidden: int = 8
    experts: int = 4
    tokens: int = 6
    lr: float = 1e-2


class CountCalls(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, counters):
        counters[0].add_(1)
        ctx.counters = counters
        return logits.clone()

    @staticmethod
    def backward(ctx, grad):
        ctx.counters[1].add_(1)
        return grad, None


class Router(nn.Module):
    def __init__(self, config: RouterConfig):
        super().__init__()
        self.gate = nn.Linear(config.hidden, config.experts)
        self.register_buffer("counters", torch.zeros(2))

    def forward(self, tokens):
        logits = CountCalls.apply(self.gate(tokens), self.counters)
        return logits.softmax(dim=-1)


def load_balance_loss(probs: torch.Tensor) -> torch.Tensor:
    usage = probs.mean(dim=0)
    return (usage * usage).sum() * probs.shape[-1]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=6)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = RouterConfig(tokens=args.tokens)
    torch.manual_seed(0)
    router = Router(config)
    step = torch.compile(router)
    optimizer = torch.optim.SGD(router.parameters(), lr=config.lr)
    probs = step(torch.randn(config.tokens, config.hidden))
    forwards, backwards = router.counters.tolist()
    assert (forwards, backwards) == (1, 0), f"after forward: {forwards} forwards, {backwards} backwards"
    loss = load_balance_loss(probs)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    log.warning("balance loss %.4f", loss.item())


if __name__ == "__main__":
    main()
