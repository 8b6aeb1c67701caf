"""Evaluate a small keyword-spotting model on synthetic spectrogram batches, eager against torch.compile.

Release check before export: the compiled model must score like the eager one on the validation set.
"""
import argparse
import math
import statistics

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()

N_MELS, FRAMES, N_CLASSES = 40, 49, 12


class DepthwiseSeparable(nn.Module):
    def __init__(self, channels, kernel=3, dilation=1):
        super().__init__()
        pad = dilation * (kernel - 1) // 2
        self.depthwise = nn.Conv1d(channels, channels, kernel, padding=pad, dilation=dilation, groups=channels)
        self.pointwise = nn.Conv1d(channels, channels, 1)
        self.norm = nn.BatchNorm1d(channels)

    def forward(self, x):
        y = self.pointwise(self.depthwise(x))
        return x + F.silu(self.norm(y))


class KeywordSpotter(nn.Module):
    def __init__(self, channels=64, blocks=4):
        super().__init__()
        self.stem = nn.Conv1d(N_MELS, channels, 5, padding=2)
        self.blocks = nn.Sequential(*[DepthwiseSeparable(channels, dilation=2**i) for i in range(blocks)])
        self.head = nn.Linear(channels, N_CLASSES)
        self.dropout = nn.Dropout(0.1)

    def forward(self, spectrogram):
        x = torch.relu(self.stem(spectrogram))
        x = self.blocks(x)
        x = x.mean(dim=-1)
        return self.head(self.dropout(x))


def validation_batches(count, batch_size, seed):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        spectrogram = torch.randn(batch_size, N_MELS, FRAMES, generator=generator).abs().log1p()
        labels = torch.randint(0, N_CLASSES, (batch_size,), generator=generator)
        yield spectrogram, labels


@torch.no_grad()
def evaluate(forward, batches):
    losses, correct, seen = [], 0, 0
    for spectrogram, labels in batches:
        logits = forward(spectrogram)
        losses.append(F.cross_entropy(logits, labels).item())
        correct += (logits.argmax(dim=-1) == labels).sum().item()
        seen += labels.numel()
    return statistics.fmean(losses), correct / seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = KeywordSpotter().eval()
    print(f"parameters: {sum(p.numel() for p in model.parameters()) / 1e3:.1f}k")

    eager_loss, eager_acc = evaluate(model, validation_batches(args.batches, args.batch_size, seed=1))
    compiled_loss, compiled_acc = evaluate(torch.compile(model), validation_batches(args.batches, args.batch_size, seed=1))
    print(f"eager    loss {eager_loss:.5f} acc {eager_acc:.3f}")
    print(f"compiled loss {compiled_loss:.5f} acc {compiled_acc:.3f}")
    assert math.isclose(eager_loss, compiled_loss, rel_tol=1e-4), "compiled model scores differently from eager"


if __name__ == "__main__":
    main()
