"""Spread candidates over a host's GPUs: each running candidate gets the least busy GPU as its default device.

The lease does not hide the other GPUs: it rotates ``CUDA_VISIBLE_DEVICES`` so that the leased GPU comes first.
A script's plain ``"cuda"`` then lands on the candidate's own GPU, while a script that asks for ``cuda:1`` still
finds a second device, and every candidate sees the same logical numbering (``cuda:0`` in its messages).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
from contextlib import contextmanager
from typing import Callable, Iterator, Mapping, Sequence

# Each running candidate holds a compile's memory (and on a GPU host a CUDA context); 8 is the most measured
# (-j 8 ran 1.3x faster than -j 1 on a 16-core H100 host, README).
MAX_DEFAULT_JOBS = 8


def _nvidia_smi_gpus() -> tuple[str, ...]:
    """The host's GPU indices as ``nvidia-smi`` lists them (without creating a CUDA context); none without it."""

    executable = shutil.which("nvidia-smi")
    if executable is None:
        return ()
    try:
        listing = subprocess.run(
            [executable, "--query-gpu=index", "--format=csv,noheader"], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError):
        return ()
    if listing.returncode != 0:
        return ()
    return tuple(line.strip() for line in listing.stdout.splitlines() if line.strip().isdigit())


def visible_gpus(
    environ: Mapping[str, str] = os.environ, probe: Callable[[], tuple[str, ...]] = _nvidia_smi_gpus
) -> tuple[str, ...]:
    """The GPUs candidates may use: ``CUDA_VISIBLE_DEVICES`` where it is set (as CUDA reads it: up to the first
    invalid entry), else every GPU ``probe`` finds."""

    listed = environ.get("CUDA_VISIBLE_DEVICES")
    if listed is None:
        return probe()
    gpus: list[str] = []
    for entry in (part.strip() for part in listed.split(",")):
        if not entry or entry.startswith("-"):
            break
        gpus.append(entry)
    return tuple(gpus)


def usable_cores() -> int:
    """The cores this process may run on (``taskset``, a container's CPU set), not every core of the host."""

    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_jobs(cpu_count: int | None, gpu_count: int) -> int:
    """Candidates evaluated at once by default: half the cores (compiles are CPU work), at most
    ``MAX_DEFAULT_JOBS``, but one per GPU where a host has more GPUs than that (and the cores to feed them)."""

    half_the_cores = max(1, (cpu_count or 1) // 2)
    return min(half_the_cores, max(MAX_DEFAULT_JOBS, gpu_count))


class GpuPool:
    """Hands each running candidate the GPU that the fewest running candidates use (ties: the first listed).

    With fewer than two GPUs there is nothing to spread and a lease changes nothing.
    """

    def __init__(self, gpus: Sequence[str]):
        self.gpus = tuple(gpus)
        self._running = [0] * len(self.gpus)
        self._lock = threading.Lock()

    @contextmanager
    def lease(self) -> Iterator[dict[str, str]]:
        """The environment a candidate adds while it runs: ``CUDA_VISIBLE_DEVICES`` with its GPU first."""

        if len(self.gpus) < 2:
            yield {}
            return
        with self._lock:
            chosen = min(range(len(self.gpus)), key=lambda index: self._running[index])
            self._running[chosen] += 1
        try:
            rotated = self.gpus[chosen:] + self.gpus[:chosen]
            yield {"CUDA_VISIBLE_DEVICES": ",".join(rotated)}
        finally:
            with self._lock:
                self._running[chosen] -= 1


NO_GPUS = GpuPool(())
