"""Export check for a small vision transformer before deployment: patches are embedded, run through two
encoder blocks and pooled; the model compiled with the team's edge backend must match eager within the
deployment tolerance on a calibration batch.

Planted for the corpus (see edge_backend.py): the backend lowers the exact GELU to an approximation.
"""

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn

import edge_backend  # noqa: F401  registers the "edge" backend

log = logging.getLogger("export")


@dataclass
class ViTConfig:
    image: int = 8
    patch: int = 4
    channels: int = 3
    dim: int = 16
    heads: int = 2
    depth: int = 2
    classes: int = 5
    tolerance: float = 1e-4


class PatchEmbed(nn.Module):
    def __init__(self, config: ViTConfig):
        super().__init__()
        self.proj = nn.Conv2d(config.channels, config.dim, config.patch, config.patch)

    def forward(self, images):
        return self.proj(images).flatten(2).transpose(1, 2)


class MLP(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc1 = nn.Linear(dim, 4 * dim)
        self.act = nn.GELU()
        self.fc2 = nn.Linear(4 * dim, dim)

    def forward(self, x):
        return self.fc2(self.act(self.fc1(x)))


class Block(nn.Module):
    def __init__(self, config: ViTConfig):
        super().__init__()
        self.norm1 = nn.LayerNorm(config.dim)
        self.attn = nn.MultiheadAttention(config.dim, config.heads, batch_first=True)
        self.norm2 = nn.LayerNorm(config.dim)
        self.mlp = MLP(config.dim)

    def forward(self, x):
        h = self.norm1(x)
        x = x + self.attn(h, h, h, need_weights=False)[0]
        return x + self.mlp(self.norm2(x))


class TinyViT(nn.Module):
    def __init__(self, config: ViTConfig):
        super().__init__()
        self.embed = PatchEmbed(config)
        self.blocks = nn.ModuleList(Block(config) for _ in range(config.depth))
        self.head = nn.Linear(config.dim, config.classes)

    def forward(self, images):
        x = self.embed(images)
        for block in self.blocks:
            x = block(x)
        return self.head(x.mean(dim=1))


def calibration_batch(config: ViTConfig, size: int) -> torch.Tensor:
    return torch.randn(size, config.channels, config.image, config.image)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = ViTConfig()
    torch.manual_seed(0)
    model = TinyViT(config).eval()
    exported = torch.compile(model, backend="edge")
    images = calibration_batch(config, args.batch)
    with torch.no_grad():
        expected, actual = model(images), exported(images)
    log.warning("max deviation %.3g", (expected - actual).abs().max().item())
    torch.testing.assert_close(actual, expected, atol=config.tolerance, rtol=config.tolerance)


if __name__ == "__main__":
    main()
