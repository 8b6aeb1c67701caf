"""Autoencoder with a gradient penalty on its latents (a WGAN-GP-style regularizer), model compiled.

Upstream: https://github.com/pytorch/pytorch/issues/132929 (autograd.grad of a compiled module's output with
respect to an intermediate output raises "appears to not have been used in the graph"; eager works).
"""

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn

log = logging.getLogger("ae")


@dataclass
class TrainConfig:
    channels: int = 3
    latent: int = 4
    size: int = 8
    batch: int = 2
    lr: float = 1e-3
    penalty: float = 1.0
    steps: int = 1


class Encoder(nn.Module):
    def __init__(self, channels, latent):
        super().__init__()
        self.down = nn.Conv2d(channels, latent, 1, 1)

    def forward(self, x):
        return self.down(x)


class Decoder(nn.Module):
    def __init__(self, channels, latent):
        super().__init__()
        self.up = nn.Conv2d(latent, channels, 1, 1)

    def forward(self, z):
        return self.up(z)


class AutoEncoder(nn.Module):
    def __init__(self, config: TrainConfig):
        super().__init__()
        self.encoder = Encoder(config.channels, config.latent)
        self.decoder = Decoder(config.channels, config.latent)

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z


class PenaltyLoss:
    def __init__(self, weight):
        self.weight = weight

    def __call__(self, latents, reconstruction):
        grads = torch.autograd.grad(outputs=[reconstruction.sum()], inputs=[latents], create_graph=True)[0]
        return self.weight * grads.pow(2).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = TrainConfig(steps=args.steps)
    torch.manual_seed(0)
    model = torch.compile(AutoEncoder(config))
    optimizer = torch.optim.Adam(model.parameters(), lr=config.lr)
    penalty = PenaltyLoss(config.penalty)
    for step in range(config.steps):
        data = torch.randn(config.batch, config.channels, config.size, config.size)
        reconstruction, latents = model(data)
        loss = (reconstruction - data).pow(2).mean() + penalty(latents, reconstruction)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.warning("step %d loss %.4f", step, loss.item())


if __name__ == "__main__":
    main()
