"""Score a small tabular regressor on half-precision feature batches, compiled against eager.

The features come from a float16 feature store; the model is kept in float32. Rows are scored one at a time,
as the online service does: each is scored by the compiled model inside an evaluation helper, then by the
eager model, and the two must agree.

Upstream: https://github.com/pytorch/pytorch/issues/141865 (a compiled nn.Linear accepts a one-row float16 input
with float32 weights on the CPU, where eager raises "mat1 and mat2 must have the same dtype").
"""

import argparse
import logging

import torch
from torch import nn

log = logging.getLogger("score")


class Regressor(nn.Module):
    def __init__(self, features=8, hidden=16):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(features, hidden), nn.ReLU(), nn.Linear(hidden, 1))

    def forward(self, x):
        return self.body(x).squeeze(-1)


def feature_batches(count, batch, features, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(batch, features, generator=generator).to(torch.float16) for _ in range(count)]


def evaluate(model, batches):
    with torch.no_grad():
        return [model(batch) for batch in batches]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=3)
    parser.add_argument("--batch-size", type=int, default=1)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    torch.manual_seed(0)
    model = Regressor().eval()
    batches = feature_batches(args.batches, args.batch_size, 8)
    compiled_scores = evaluate(torch.compile(model), batches)
    log.info("compiled: %d batches scored", len(compiled_scores))
    eager_scores = evaluate(model, batches)
    for compiled, eager in zip(compiled_scores, eager_scores):
        torch.testing.assert_close(compiled.float(), eager.float(), rtol=1e-2, atol=1e-2)
    print("scores agree")


if __name__ == "__main__":
    main()
