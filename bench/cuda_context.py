"""What starting CUDA costs a forked candidate, alone and several at once: the part of a candidate's time that
the warm server cannot do before it forks (a CUDA context does not survive a fork).

A parent with torch imported forks N children at once; each starts CUDA (`torch.ones(1, device="cuda")` and a
sync) and reports how long that took, then runs a few small kernels with a sync after each (as an oracle's
comparisons do) and reports that too.

    python bench/cuda_context.py [--parallel 1,4,8]
"""

from __future__ import annotations

import argparse
import importlib
import os
import time


def child(write_fd: int) -> None:
    import torch

    started = time.monotonic()
    torch.ones(1, device="cuda")
    torch.cuda.synchronize()
    context = time.monotonic() - started
    started = time.monotonic()
    x = torch.randn(64, 64, device="cuda")
    for _ in range(200):
        x = torch.tanh(x @ x) * 0.5
        float(x.sum())  # a sync, as a comparison of outputs makes
    kernels = time.monotonic() - started
    os.write(write_fd, f"{context:.3f} {kernels:.3f}\n".encode())
    os._exit(0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", default="1,4,8")
    args = parser.parse_args()
    os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")
    importlib.import_module("torch")  # before the forks, as in the warm server

    for parallel in [int(n) for n in args.parallel.split(",")]:
        for _ in range(2):
            read_fd, write_fd = os.pipe()
            pids = []
            for _ in range(parallel):
                pid = os.fork()
                if pid == 0:
                    os.close(read_fd)
                    child(write_fd)
                pids.append(pid)
            os.close(write_fd)
            for pid in pids:
                os.waitpid(pid, 0)
            with os.fdopen(read_fd) as replies:
                rows = sorted(tuple(map(float, line.split())) for line in replies)
            print(
                f"{parallel} at once: CUDA start", " ".join(f"{c:.2f}" for c, _ in rows),
                "s; 200 small kernels with a sync each", " ".join(f"{k:.2f}" for _, k in sorted(rows, key=lambda r: r[1])), "s",
            )


if __name__ == "__main__":
    main()
