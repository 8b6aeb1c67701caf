"""Feature transforms for a sensor-telemetry model, compiled once each and looked up by name.

Transforms register themselves in a registry under a name, through a decorator that also compiles them; a
``FeatureBuilder`` applies the ones a feature spec names, with options bound by ``functools.partial``. The
script loads a synthetic telemetry batch, computes summary statistics, then builds the features.
Inductor's scan lowering is planted to crash on outer dimensions (_planted.py).
"""

import functools
import logging
import math
import time
from dataclasses import dataclass

import torch

from _planted import plant_crash  # PLANTED Inductor bug (see _planted.py)

plant_crash()
log = logging.getLogger("features")

TRANSFORMS = {}


def transform(name, compile=True):
    """Register ``fn`` under ``name``; compiled with torch.compile unless ``compile`` is false."""

    def decorate(fn):
        target = torch.compile(fn, dynamic=False) if compile else fn

        @functools.wraps(fn)
        def timed(*args, **kwargs):
            started = time.perf_counter()
            out = target(*args, **kwargs)
            log.debug("%s took %.3fs", name, time.perf_counter() - started)
            return out

        TRANSFORMS[name] = timed
        return timed

    return decorate


@transform("standardize")
def standardize(x, eps=1e-5):
    return (x - x.mean(0, keepdim=True)) / (x.std(0, keepdim=True) + eps)


@transform("clip")
def clip(x, low=-3.0, high=3.0):
    return x.clamp(low, high)


@transform("running_energy")
def running_energy(x, decay=1.0):
    """Cumulative signal energy over time (dim 0 is time), normalised by the step count."""
    steps = torch.arange(1, x.shape[0] + 1, dtype=x.dtype, device=x.device)[:, None]
    return torch.cumsum(x * x * decay, dim=0) / steps


@transform("spectral_power", compile=False)
def spectral_power(x):
    return torch.fft.rfft(x, dim=0).abs().pow(2)


@dataclass
class FeatureSpec:
    name: str
    steps: tuple
    options: dict


class FeatureBuilder:
    def __init__(self, registry, specs):
        self.registry = registry
        self.specs = specs

    def _pipeline(self, spec):
        calls = []
        for step in spec.steps:
            fn = self.registry[step]
            calls.append(functools.partial(fn, **spec.options.get(step, {})))
        return calls

    def build_one(self, spec, x):
        for call in self._pipeline(spec):
            x = call(x)
        return x

    def build(self, x):
        return {spec.name: self.build_one(spec, x) for spec in self.specs}


def synthetic_telemetry(steps, sensors, seed):
    g = torch.Generator().manual_seed(seed)
    t = torch.linspace(0, 4 * math.pi, steps)[:, None]
    phase = torch.rand(1, sensors, generator=g) * math.pi
    drift = torch.cumsum(0.05 * torch.randn(steps, sensors, generator=g), dim=0)
    return torch.sin(t + phase) + drift + 0.1 * torch.randn(steps, sensors, generator=g)


def summarize(x):
    return {
        "mean": x.mean().item(),
        "std": x.std().item(),
        "min": x.min().item(),
        "max": x.max().item(),
        "nan": int(torch.isnan(x).sum()),
    }


SPECS = [
    FeatureSpec("level", ("standardize", "clip"), {"clip": {"low": -2.5, "high": 2.5}}),
    FeatureSpec("spectrum", ("spectral_power",), {}),
    FeatureSpec("energy", ("standardize", "running_energy"), {"running_energy": {"decay": 0.5}}),
]


def main():
    logging.basicConfig(level=logging.INFO)
    x = synthetic_telemetry(steps=64, sensors=6, seed=0)
    stats = summarize(x)
    log.info("telemetry %s: %s", tuple(x.shape), ", ".join(f"{k}={v:.3g}" for k, v in stats.items()))
    builder = FeatureBuilder(TRANSFORMS, SPECS)
    features = builder.build(x)
    for name, value in features.items():
        log.info("feature %-9s shape %s mean %.4f", name, tuple(value.shape), value.mean().item())
    total = sum(v.shape[-1] for v in features.values())
    print(f"built {len(features)} features, {total} columns")


if __name__ == "__main__":
    main()
