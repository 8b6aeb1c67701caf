"""Spectral denoiser for short audio clips: FFT, a learned complex gain per bin plus a global complex offset,
inverse FFT. The model is compiled for inference over a batch of synthetic clips.

Upstream: https://github.com/pytorch/pytorch/issues/160495 (adding a 0-dim complex tensor under Inductor raises
"self.dim() cannot be 0 to view ComplexFloat as Float"; eager works).
"""

import argparse
import logging
import math
from dataclasses import dataclass

import torch
from torch import nn

log = logging.getLogger("denoise")


@dataclass
class DenoiseConfig:
    sample_rate: int = 8000
    frame: int = 64
    clips: int = 4
    noise: float = 0.1
    tone_hz: float = 440.0


def synthetic_clips(config: DenoiseConfig) -> torch.Tensor:
    t = torch.arange(config.frame) / config.sample_rate
    tone = torch.sin(2 * math.pi * config.tone_hz * t)
    return tone.expand(config.clips, -1) + config.noise * torch.randn(config.clips, config.frame)


class SpectralGain(nn.Module):
    def __init__(self, bins: int):
        super().__init__()
        self.gain = nn.Parameter(torch.ones(bins, dtype=torch.complex64))

    def forward(self, spectrum):
        return spectrum * self.gain


class GlobalOffset(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("offset", torch.tensor(0.0 + 0.0j, dtype=torch.complex64))

    def forward(self, spectrum):
        shift = self.offset + self.offset  # both halves of a symmetric correction
        return spectrum + shift


class Denoiser(nn.Module):
    def __init__(self, config: DenoiseConfig):
        super().__init__()
        bins = config.frame // 2 + 1
        self.gain = SpectralGain(bins)
        self.offset = GlobalOffset()

    def forward(self, clips):
        spectrum = torch.fft.rfft(clips)
        spectrum = self.offset(self.gain(spectrum))
        return torch.fft.irfft(spectrum, n=clips.shape[-1])


def snr_db(clean: torch.Tensor, noisy: torch.Tensor) -> float:
    return 10 * math.log10(clean.pow(2).mean().item() / (noisy - clean).pow(2).mean().item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--clips", type=int, default=4)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = DenoiseConfig(clips=args.clips)
    torch.manual_seed(0)
    model = torch.compile(Denoiser(config).eval())
    clips = synthetic_clips(config)
    with torch.no_grad():
        out = model(clips)
    log.warning("output snr %.2f dB", snr_db(clips, out))


if __name__ == "__main__":
    main()
