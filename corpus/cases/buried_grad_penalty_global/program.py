"""Train a tiny convolutional autoencoder with a gradient penalty on its latents, the forward compiled once.

The training function compiles the module-level ``autoencode`` the first time it runs (``global`` rebinding, as
a notebook does) and ends by checking that the parameters moved.

Upstream: https://github.com/pytorch/pytorch/issues/132929 (autograd.grad of a compiled function's output with
respect to an intermediate output it also returns raises "appears to not have been used in the graph"; eager
works).
"""

import argparse
from dataclasses import dataclass

import torch
import torch.nn.functional as F


@dataclass
class Config:
    channels: int = 3
    latent: int = 4
    size: int = 6
    batch: int = 2
    steps: int = 2
    lr: float = 1e-2
    penalty: float = 0.5


def init_weights(config: Config):
    torch.manual_seed(0)
    encoder = (torch.randn(config.latent, config.channels, 1, 1) * 0.1).requires_grad_()
    decoder = (torch.randn(config.channels, config.latent, 1, 1) * 0.1).requires_grad_()
    return [encoder, decoder]


def autoencode(images, encoder, decoder):
    latents = F.conv2d(images, encoder)
    reconstruction = F.conv2d(torch.tanh(latents), decoder)
    return reconstruction, latents


def latent_penalty(reconstruction, latents):
    grads = torch.autograd.grad(reconstruction.sum(), latents, create_graph=True)[0]
    return grads.pow(2).mean()


def train(config: Config):
    global autoencode
    autoencode = torch.compile(autoencode)
    weights = init_weights(config)
    before = [w.detach().clone() for w in weights]
    optimizer = torch.optim.SGD(weights, lr=config.lr)
    for step in range(config.steps):
        images = torch.rand(config.batch, config.channels, config.size, config.size)
        reconstruction, latents = autoencode(images, *weights)
        loss = F.mse_loss(reconstruction, images) + config.penalty * latent_penalty(reconstruction, latents)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        print(f"step {step}: loss {loss.item():.4f}")
    return before, weights


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    before, after = train(Config(steps=args.steps))
    moved = [not torch.equal(b, a.detach()) for b, a in zip(before, after)]
    assert all(moved), f"some parameters did not train: {moved}"


if __name__ == "__main__":
    main()
