"""A phase-feature extractor for audio spectrograms, compiled for inference on CPU.

Upstream: https://github.com/pytorch/pytorch/issues/148241 (Inductor's C++ backend gives pi where eager gives 0
for atan2(x, x) after Tanhshrink, at x where Tanhshrink is exactly 0).
"""

import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("phase")


@dataclass
class Config:
    channels: int = 3
    height: int = 64
    width: int = 64
    seed: int = 0


class Squash(nn.Module):
    def __init__(self):
        super().__init__()
        self.shrink = nn.Tanhshrink()

    def forward(self, x):
        return self.shrink(x)


class Phase(nn.Module):
    def forward(self, x):
        return torch.atan2(x, x)


class PhaseFeatures(nn.Module):
    def __init__(self, config: Config):
        super().__init__()
        self.squash = Squash()
        self.phase = Phase()
        self.config = config

    def forward(self, spectrogram):
        return self.phase(self.squash(spectrogram))


def load_spectrogram(config: Config) -> torch.Tensor:
    torch.manual_seed(config.seed)
    return torch.randn(1, config.channels, config.height, config.width)


def main() -> None:
    config = Config()
    model = PhaseFeatures(config).eval()
    spectrogram = load_spectrogram(config)
    with torch.no_grad():
        expected = model(spectrogram)
        compiled = torch.compile(model)(spectrogram)
    log.warning("max diff %s", (expected - compiled).abs().nan_to_num().max().item())
    torch.testing.assert_close(compiled, expected, equal_nan=True)


if __name__ == "__main__":
    main()
