"""Block floating-point decoder on CUDA: float16 mantissas scaled by int8 block exponents with torch.ldexp.

A compressed activation cache stores each row as float16 mantissas and an int8 exponent per element group;
decoding is ``torch.ldexp(mantissa, exponent)``. The decoder is compiled and compared with eager for every
cache layout and seed.

Upstream: https://github.com/pytorch/pytorch/issues/172068 (on CUDA, Inductor's float16 ``aten.ldexp`` with
integer exponents gives results that differ from eager beyond assert_close tolerance for some elements).
CUDA only; not verifiable on a CPU machine.
"""

from dataclasses import dataclass

import torch

DEVICE = "cuda"


@dataclass(frozen=True)
class Layout:
    rows: int
    cols: int


LAYOUTS = (Layout(1, 100), Layout(4, 64), Layout(8, 32))
SEEDS = (0, 1)


def decode(mantissa, exponent):
    return torch.ldexp(mantissa, exponent)


def encode_cache(layout: Layout, seed: int):
    gen = torch.Generator(device=DEVICE).manual_seed(seed)
    mantissa = torch.randn(layout.rows, layout.cols, generator=gen, device=DEVICE, dtype=torch.float16)
    exponent = torch.randint(2, 32, (layout.rows, layout.cols), generator=gen, device=DEVICE, dtype=torch.int8)
    return mantissa, exponent


def check():
    compiled = torch.compile(decode)
    problems = []
    for layout in LAYOUTS:
        for seed in SEEDS:
            mantissa, exponent = encode_cache(layout, seed)
            expected = decode(mantissa, exponent)
            actual = compiled(mantissa, exponent)
            try:
                torch.testing.assert_close(actual, expected)
            except AssertionError as err:
                problems.append(f"{layout} seed {seed}: {str(err).splitlines()[2]}")
    return problems


if __name__ == "__main__":
    problems = check()
    print("\n".join(problems) or "decoder ok")
    assert not problems, f"{len(problems)} decoded caches differ from eager"
