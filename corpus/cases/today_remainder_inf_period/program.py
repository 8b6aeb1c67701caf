"""Calendar feature encoder for an event stream: raw time features are wrapped by their period, compiled.

Each feature has a period (hours wrap at 24, weekdays at 7); a period of ``inf`` marks a feature that never
wraps (a running day counter), for which ``remainder`` returns the value unchanged. The encoder is compiled
with torch.compile and checked against eager over several seeds and every feature.

Upstream: https://github.com/pytorch/pytorch/issues/198057 (CPU Inductor's vectorized ``torch.remainder``
computes ``a - floor(a / b) * b``: NaN for an infinite divisor, and 0 for large quotients; eager returns the
dividend).
"""

import math
from dataclasses import dataclass, field

import torch


@dataclass
class FeatureSpec:
    name: str
    period: float
    scale: float = 1.0


@dataclass
class EncoderConfig:
    batch: int = 16
    seeds: tuple = (0, 1, 2)
    features: list = field(
        default_factory=lambda: [
            FeatureSpec("hour_of_day", 24.0),
            FeatureSpec("day_of_week", 7.0),
            FeatureSpec("day_counter", math.inf, scale=1.0 / 365.0),
        ]
    )


def wrap_feature(values, periods, scales):
    """Wrap raw values into [0, period) and rescale them."""
    wrapped = torch.remainder(values, periods)
    return wrapped * scales


class CalendarEncoder:
    def __init__(self, config: EncoderConfig):
        self.config = config
        self.compiled = torch.compile(wrap_feature)

    def raw_features(self, seed):
        gen = torch.Generator().manual_seed(seed)
        hours = torch.randint(0, 24 * 30, (self.config.batch,), generator=gen).float()
        days = torch.randint(0, 400, (self.config.batch,), generator=gen).float()
        counter = torch.randint(0, 2000, (self.config.batch,), generator=gen).float()
        return {"hour_of_day": hours, "day_of_week": days, "day_counter": counter}

    def encode(self, raw, fn):
        out = {}
        for spec in self.config.features:
            values = raw[spec.name]
            periods = torch.full_like(values, spec.period)
            scales = torch.full_like(values, spec.scale)
            out[spec.name] = fn(values, periods, scales)
        return out


def check_encoder(config: EncoderConfig):
    encoder = CalendarEncoder(config)
    problems = []
    for seed in config.seeds:
        raw = encoder.raw_features(seed)
        expected = encoder.encode(raw, wrap_feature)
        actual = encoder.encode(raw, encoder.compiled)
        for key in ("hour_of_day", "day_of_week", "day_counter"):
            try:
                torch.testing.assert_close(actual[key], expected[key])
            except AssertionError as err:
                problems.append(f"seed {seed} feature {key}: {str(err).splitlines()[0]}")
    return problems


def main():
    torch.manual_seed(0)
    problems = check_encoder(EncoderConfig())
    for line in problems:
        print(line)
    if problems:
        raise SystemExit(f"{len(problems)} encoded feature(s) disagree with eager")
    print("all features match")


if __name__ == "__main__":
    main()
