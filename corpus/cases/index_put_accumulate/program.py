"""Memory-bank update for a contrastive trainer: rows of a feature bank are doubled where a batch points.

Upstream: https://github.com/pytorch/pytorch/issues/138908 (dynamic-shape index_put with accumulate applied
twice by Inductor on CPU; torch 2.4/2.5, fixed later).
"""

import argparse
import logging
from dataclasses import dataclass

import torch

log = logging.getLogger("bank")


@dataclass
class BankConfig:
    slots: int = 2
    width: int = 32
    batch: int = 2
    offset: int = 10
    steps: int = 1
    seed: int = 0


class FeatureBank:
    def __init__(self, config: BankConfig):
        self.config = config
        self.features = torch.randn(config.slots, config.width)
        self.hits = torch.zeros(config.slots, dtype=torch.long)

    def snapshot(self):
        return self.features.clone()


def make_batch(config: BankConfig) -> torch.Tensor:
    # Indices arrive shifted by `offset` from the data loader; the update undoes the shift.
    return torch.randint(-config.offset, -config.offset + 1, (1, config.batch), dtype=torch.int64)


@torch.compile(backend="inductor", dynamic=True)
def reinforce(indices, features):
    rows = indices + 10
    features[rows] += features[rows]


def reinforce_reference(indices, features):
    rows = indices + 10
    features[rows] += features[rows]


def summarize(bank: FeatureBank) -> str:
    return f"norm={bank.features.norm():.4f} hits={bank.hits.tolist()}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1)
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.WARNING)

    config = BankConfig(steps=args.steps)
    torch.manual_seed(config.seed)
    bank = FeatureBank(config)
    for step in range(config.steps):
        indices = make_batch(config)
        expected = bank.snapshot()
        with torch.no_grad():
            reinforce_reference(indices, expected)
            reinforce(indices, bank.features)
        bank.hits[indices + config.offset] += 1
        log.info("step %d: %s", step, summarize(bank))
        assert torch.allclose(bank.features, expected), "bank update differs from the reference"


if __name__ == "__main__":
    main()
