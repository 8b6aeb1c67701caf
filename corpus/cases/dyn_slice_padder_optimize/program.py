"""Variable-width feature padding for a small encoder, with a self-check run before training starts.

The padder is a dataclass holding its compiled function (`torch._dynamo.optimize`); the check pads a few widths
and exits non-zero where padding detached the features from the graph.
"""

import sys
from dataclasses import dataclass, field

import torch


def pad_to(features, width):
    padded = features.new_zeros(features.shape[0], width)
    padded[:, : features.shape[1]] = features
    return padded, padded.requires_grad


@dataclass
class Padder:
    width: int = 8
    compiled: object = field(default=None, repr=False)

    def __post_init__(self):
        self.compiled = torch._dynamo.optimize("aot_eager")(pad_to)

    def __call__(self, features):
        return self.compiled(features, self.width)


def self_check(padder, widths):
    detached = []
    for width in widths:
        features = torch.randn(3, width, requires_grad=True)
        padded, attached = padder(features)
        if not attached:
            detached.append(width)
    return detached


if __name__ == "__main__":
    torch.manual_seed(0)
    padder = Padder(width=8)
    detached = self_check(padder, [2, 4, 6])
    if detached:
        print(f"padding detached the features at widths {detached}")
        sys.exit(1)
    print("padding keeps features attached")
