"""Sensor log resampler: sample timestamps in int64 nanoseconds, computed by a compiled index builder.

Each stream is resampled on a grid of whole seconds; the grid's timestamps are ``start_ns + arange(n) * 10**9``
in int64 nanoseconds, followed by the per-sample gap to the next grid point. The compiled builder must give
the same timestamps as eager for every stream.

Upstream: https://github.com/pytorch/pytorch/issues/175966 (Inductor multiplies an int64 ``arange`` by a
constant that fits in int32 in 32-bit arithmetic, so the products wrap past 2**31; reported on CUDA, fires on
CPU too; see also #183901).
"""

from dataclasses import dataclass

import torch

NS_PER_SECOND = 1_000_000_000


@dataclass(frozen=True)
class Stream:
    name: str
    start_ns: int
    samples: int


STREAMS = (
    Stream("imu", 1_700_000_000_000_000_000, 6),
    Stream("gps", 1_700_000_000_500_000_000, 12),
    Stream("baro", 1_700_000_001_000_000_000, 4),
)


def grid_timestamps(start, samples: int):
    offsets = torch.arange(0, samples, dtype=torch.int64) * torch.tensor([NS_PER_SECOND], dtype=torch.int64)
    stamps = start + offsets
    gaps = torch.diff(stamps, append=stamps[-1:] + NS_PER_SECOND)
    return stamps, gaps


class Resampler:
    def __init__(self):
        self.build = torch.compile(grid_timestamps)

    def plan(self, stream: Stream, fn):
        start = torch.tensor([stream.start_ns], dtype=torch.int64)
        stamps, gaps = fn(start, stream.samples)
        return {"stamps": stamps, "gaps": gaps, "end": stamps[-1]}


def check_streams():
    resampler = Resampler()
    errors = []
    for stream in STREAMS:
        expected = resampler.plan(stream, grid_timestamps)
        actual = resampler.plan(stream, resampler.build)
        for key in ("stamps", "gaps", "end"):
            if not torch.equal(actual[key], expected[key]):
                errors.append(f"{stream.name}.{key}: eager {expected[key].tolist()} compiled {actual[key].tolist()}")
        if not bool((actual["gaps"] == NS_PER_SECOND).all()):
            errors.append(f"{stream.name}: grid is not one second apart")
    return errors


if __name__ == "__main__":
    errors = check_streams()
    for e in errors:
        print(e)
    assert not errors, f"{len(errors)} timestamp check(s) failed"
    print("resampling plan ok")
