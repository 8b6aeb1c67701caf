"""Streaming denoiser: audio chunks from a generator go through a small 1-D conv autoencoder, compiled lazily
(on first use of ``Pipeline.model``) with a backend of ours that swaps SiLU for a cheaper gate. A ParityMonitor
context manager watches every chunk against the eager model and raises when it leaves, if the worst error over
the stream is above tolerance.

The planted bug: the "cheaper gate" is hard-swish, not SiLU.
"""

import argparse
import logging
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("denoise")


def hard_gate(x, inplace=False):
    return x * F.hardsigmoid(x)


def cheap_activations(gm, example_inputs):
    swapped = 0
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is F.silu:
            node.target = hard_gate
            swapped += 1
    gm.recompile()
    log.info("swapped %d activations", swapped)
    return gm.forward


class Denoiser(nn.Module):
    def __init__(self, channels=4, hidden=8):
        super().__init__()
        self.encode = nn.Conv1d(channels, hidden, 3, padding=1)
        self.decode = nn.Conv1d(hidden, channels, 3, padding=1)

    def forward(self, chunk):
        return chunk - self.decode(F.silu(self.encode(chunk)))


class Pipeline:
    def __init__(self, denoiser):
        self.denoiser = denoiser
        self._compiled = None

    @property
    def model(self):
        if self._compiled is None:
            self._compiled = torch.compile(self.denoiser, backend=cheap_activations)
        return self._compiled


class ParityError(AssertionError):
    pass


class ParityMonitor:
    def __init__(self, tolerance):
        self.tolerance = tolerance
        self.worst = 0.0
        self.seen = 0

    def observe(self, got, want):
        self.worst = max(self.worst, (got - want).abs().max().item())
        self.seen += 1

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        if kind is None and not self.worst <= self.tolerance:
            raise ParityError(f"worst error {self.worst:.3g} over {self.seen} chunks (tolerance {self.tolerance})")
        return False


def chunks(count, channels=4, length=16, seed=0):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        yield torch.randn(1, channels, length, generator=generator)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    pipeline = Pipeline(Denoiser().eval())
    with torch.no_grad(), ParityMonitor(args.tolerance) as monitor:
        for chunk in chunks(args.chunks):
            monitor.observe(pipeline.model(chunk), pipeline.denoiser(chunk))
    log.warning("stream ok: %d chunks, worst error %.2e", monitor.seen, monitor.worst)
    print(f"energy ratio {math.exp(0):.1f}")


if __name__ == "__main__":
    main()
