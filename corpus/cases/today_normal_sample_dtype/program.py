"""Latent sampler of a half-precision VAE decoder: samples come from a Normal and must keep the latent dtype.

The encoder head produces half-precision means; the noise scale is a float32 learned temperature. The sampler
draws ``Normal(mean, scale).sample()`` inside a compiled function, and the decoder contract says latents come
back in the dtype of the means. Checked for every latent size and seed.

Upstream: https://github.com/pytorch/pytorch/issues/194547 (under torch.compile,
``torch.distributions.Normal(loc_fp16, scale_fp32).sample()`` returns float32 where eager keeps float16).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class SamplerConfig:
    latent_sizes: tuple = (8, 16)
    seeds: tuple = (0, 7)
    batch: int = 4
    temperature: float = 0.5


class EncoderHead(nn.Module):
    def __init__(self, features, latent):
        super().__init__()
        self.mean = nn.Linear(features, latent)

    def forward(self, h):
        return self.mean(h).half()


class LatentSampler(nn.Module):
    def __init__(self, latent, temperature):
        super().__init__()
        self.log_scale = nn.Parameter(torch.full((latent,), float(torch.tensor(temperature).log())))

    def forward(self, mean):
        scale = self.log_scale.exp()
        dist = torch.distributions.Normal(mean, scale)
        return dist.sample()


def draw(config: SamplerConfig, latent: int, seed: int, compile_sampler: bool):
    torch.manual_seed(seed)
    head = EncoderHead(12, latent)
    sampler = LatentSampler(latent, config.temperature)
    fn = torch.compile(sampler) if compile_sampler else sampler
    h = torch.randn(config.batch, 12)
    with torch.no_grad():
        mean = head(h)
        z = fn(mean)
    return mean, z


def check_contract(config: SamplerConfig):
    report = {}
    for latent in config.latent_sizes:
        for seed in config.seeds:
            mean, z = draw(config, latent, seed, compile_sampler=True)
            report[(latent, seed)] = {
                "shape_ok": z.shape == mean.shape,
                "dtype_ok": z.dtype == mean.dtype,
                "dtype": str(z.dtype),
                "finite": bool(torch.isfinite(z).all()),
            }
    return report


def main():
    report = check_contract(SamplerConfig())
    bad = {k: v for k, v in report.items() if not (v["shape_ok"] and v["dtype_ok"] and v["finite"])}
    for key, value in report.items():
        print(key, value)
    if bad:
        raise AssertionError(f"latent contract broken for {sorted(bad)}: decoder expects float16 latents")


if __name__ == "__main__":
    main()
