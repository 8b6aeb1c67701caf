"""Keyword spotting on log-mel frames with an accelerator backend of our own, compiled in place.

``accel_backend`` lowers the graph Dynamo hands it with a table of faster FX replacements (``LOWERINGS``) before
running it; the model is compiled in place with ``model.compile(backend=accel_backend)``. The check: over a few
batches, the compiled model agrees with an eager copy to within the tolerance.

The planted bug: the GELU replacement is the sigmoid approximation, about 0.02 off.
"""

import argparse
import copy
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("kws")


def fast_gelu(x, approximate="none"):
    return x * torch.sigmoid(1.702 * x)


def fast_relu(x, inplace=False):
    return torch.clamp_min(x, 0.0)


LOWERINGS = {torch._C._nn.gelu: fast_gelu, F.relu: fast_relu}


def accel_backend(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in LOWERINGS:
            node.target = LOWERINGS[node.target]
    gm.recompile()
    return gm.forward


class FrameEncoder(nn.Module):
    def __init__(self, mels=8, channels=12, keywords=4):
        super().__init__()
        self.conv = nn.Conv1d(mels, channels, kernel_size=3, padding=1)
        self.mix = nn.Sequential(nn.Linear(channels, channels), nn.GELU(), nn.Linear(channels, channels))
        self.classify = nn.Linear(channels, keywords)

    def forward(self, frames):
        h = F.relu(self.conv(frames)).transpose(1, 2)
        h = h + self.mix(h)
        return self.classify(h.mean(dim=1))


def batches(count, batch=2, mels=8, frames=10, seed=0):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        yield torch.randn(batch, mels, frames, generator=generator).abs().log1p()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = FrameEncoder().eval()
    reference = copy.deepcopy(model)
    model.compile(backend=accel_backend)
    worst = 0.0
    with torch.no_grad():
        for index, frames in enumerate(batches(args.batches)):
            error = (model(frames) - reference(frames)).abs().max().item()
            log.info("batch %d max error %.2e", index, error)
            worst = max(worst, error)
    assert worst < args.tolerance, f"compiled model is off by {worst:.3g}"


if __name__ == "__main__":
    main()
