"""Contact-sheet preview of uint8 camera frames: each frame's photographic negative is tiled and measured.

``magnitude`` is a shared helper written for signed residuals (``x.abs()``) that the preview also applies to
uint8 frames; the negative is ``~magnitude(frame)``, tiled twice side by side for the sheet, and the sheet's
mean brightness per channel is reported. The compiled preview must give the same brightness as eager.

Upstream: https://github.com/pytorch/pytorch/issues/187018 (CPU Inductor: abs on uint8 is emitted as
std::abs, which promotes to int, so a following neg / bitwise-not no longer wraps at 8 bits once the value
flows through cat + a reduction; the mean goes negative).
"""

from dataclasses import dataclass

import torch


@dataclass
class SheetConfig:
    height: int = 6
    width: int = 8
    channels: tuple = ("red", "green", "blue")
    seeds: tuple = (0, 1, 2)


def magnitude(x):
    return x.abs()


def preview(frame):
    negative = ~magnitude(frame)
    sheet = torch.cat([negative, negative], dim=-1)
    return sheet.float().mean(dim=(-2, -1))


def make_frame(config: SheetConfig, seed: int):
    gen = torch.Generator().manual_seed(seed)
    return torch.randint(0, 256, (len(config.channels), config.height, config.width), generator=gen, dtype=torch.uint8)


def brightness_report(config: SheetConfig, fn):
    report = {}
    for seed in config.seeds:
        means = fn(make_frame(config, seed))
        for index, channel in enumerate(config.channels):
            report[(seed, channel)] = means[index].item()
    return report


def main():
    config = SheetConfig()
    compiled = torch.compile(preview)
    expected = brightness_report(config, preview)
    actual = brightness_report(config, compiled)
    bad = []
    for key, value in expected.items():
        got = actual[key]
        if not 0.0 <= got <= 255.0 or abs(got - value) > 1e-3:
            bad.append(f"{key}: eager {value:.3f} compiled {got:.3f}")
    print(f"{len(expected)} channel means, {len(bad)} wrong")
    assert not bad, "\n".join(bad)


if __name__ == "__main__":
    main()
