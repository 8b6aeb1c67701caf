"""Train a small set-encoder whose variable-width features are padded by a helper before the classifier.

The helper pads into a fresh buffer by sliced assignment and only keeps the autograd history where gradients
flow (``padded.requires_grad``); the training function compiles it by rebinding the module's name. The check at
the end: every parameter of the encoder moved during training.

On torch 2.5.1, inside the compiled helper the buffer filled from a tensor that requires grad reads
``requires_grad=False`` (eager: True), so the helper detaches the features and the encoder never trains.
"""

import argparse
import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("set-encoder")


class Encoder(nn.Module):
    def __init__(self, features=5, hidden=6):
        super().__init__()
        self.proj = nn.Linear(features, hidden)

    def forward(self, x):
        return torch.tanh(self.proj(x))


def pad_features(features, width):
    padded = features.new_zeros(features.shape[0], width)
    padded[:, : features.shape[1]] = features
    if not padded.requires_grad:
        # inference: nothing to train through the padding
        return padded.detach()
    return padded


def make_batches(count, batch=4, features=5, classes=3, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(batch, features, generator=generator), torch.randint(0, classes, (batch,), generator=generator))
        for _ in range(count)
    ]


def train(encoder, head, batches, lr=0.1):
    global pad_features
    pad_features = torch.compile(pad_features, backend="aot_eager")
    optimizer = torch.optim.SGD([*encoder.parameters(), *head.parameters()], lr=lr)
    for step, (x, y) in enumerate(batches):
        features = pad_features(encoder(x), width=8)
        loss = F.cross_entropy(head(features), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        log.info("step %d loss %.4f", step, loss.item())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    encoder, head = Encoder(), nn.Linear(8, 3)
    before = [p.detach().clone() for p in encoder.parameters()]
    train(encoder, head, make_batches(args.steps))
    frozen = [name for (name, p), b in zip(encoder.named_parameters(), before) if torch.equal(p, b)]
    assert not frozen, f"encoder parameters did not train: {frozen}"


if __name__ == "__main__":
    main()
