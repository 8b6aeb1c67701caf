"""A normalization layer backed by a custom op (torch.library), compiled in a small classifier.

Written for the corpus: the op's fake (meta) implementation drops the last dimension, so torch.compile traces a
wrong shape and fails, while eager runs the real kernel and works.
"""

import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("clf")


@torch.library.custom_op("corpus::rms_scale", mutates_args=())
def rms_scale(x: torch.Tensor, eps: float) -> torch.Tensor:
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


@rms_scale.register_fake
def _(x, eps):
    return x.new_empty(x.shape[:-1])


@dataclass
class ClassifierConfig:
    features: int = 16
    hidden: int = 32
    classes: int = 4
    eps: float = 1e-6
    batch: int = 8


class RMSNorm(nn.Module):
    def __init__(self, eps: float):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return rms_scale(x, self.eps)


class Classifier(nn.Module):
    def __init__(self, config: ClassifierConfig):
        super().__init__()
        self.inp = nn.Linear(config.features, config.hidden)
        self.norm = RMSNorm(config.eps)
        self.act = nn.GELU()
        self.out = nn.Linear(config.hidden, config.classes)

    def forward(self, x):
        return self.out(self.act(self.norm(self.inp(x))))


def main():
    logging.basicConfig(level=logging.WARNING)
    config = ClassifierConfig()
    torch.manual_seed(0)
    model = Classifier(config)
    x = torch.randn(config.batch, config.features)
    labels = torch.randint(0, config.classes, (config.batch,))
    eager_loss = nn.functional.cross_entropy(model(x), labels)
    compiled_loss = nn.functional.cross_entropy(torch.compile(model)(x), labels)
    log.warning("loss eager %.4f compiled %.4f", eager_loss.item(), compiled_loss.item())


if __name__ == "__main__":
    main()
