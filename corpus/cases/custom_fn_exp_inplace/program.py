"""Input-saliency maps for an energy-based scorer: the scorer's first op is a memory-saving exponential written
as a custom autograd.Function that exponentiates in place; the scorer is compiled, the saliency is the
gradient of the score with respect to the (leaf) input.

Upstream: https://github.com/pytorch/pytorch/issues/141669 (an in-place op inside a custom autograd.Function's
forward on a leaf that requires grad raises under torch.compile; eager runs it, autograd is off in forward).
"""

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn

log = logging.getLogger("saliency")


@dataclass
class SaliencyConfig:
    features: int = 8
    hidden: int = 16
    samples: int = 4
    clamp: float = 4.0


class InplaceExp(torch.autograd.Function):
    """exp without a second buffer: the input is overwritten and saved as the output."""

    @staticmethod
    def forward(ctx, x):
        out = torch.exp_(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad):
        (out,) = ctx.saved_tensors
        return grad * out


class EnergyScorer(nn.Module):
    def __init__(self, config: SaliencyConfig):
        super().__init__()
        self.proj = nn.Linear(config.features, config.hidden)
        self.score = nn.Linear(config.hidden, 1)

    def forward(self, x):
        energy = InplaceExp.apply(x)
        return self.score(torch.tanh(self.proj(energy))).squeeze(-1)


def saliency(model, inputs):
    inputs = inputs.clone().requires_grad_()
    leaf = inputs
    scores = model(inputs)
    scores.sum().backward()
    return leaf.grad.abs()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=4)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = SaliencyConfig(samples=args.samples)
    torch.manual_seed(0)
    model = torch.compile(EnergyScorer(config))
    inputs = torch.randn(config.samples, config.features).clamp(-config.clamp, config.clamp)
    maps = saliency(model, inputs)
    log.warning("saliency max %.4f", maps.max().item())


if __name__ == "__main__":
    main()
