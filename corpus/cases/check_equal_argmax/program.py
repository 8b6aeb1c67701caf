"""Batch inference of an intent classifier: the compiled model must predict exactly what eager predicts.

Written for the corpus of check shapes (issue 46): ``torch.equal`` of argmax predictions inside ``torch.no_grad()``,
the check wrapped in a small report object. Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"
VOCAB, CLASSES = 50, 7


class IntentClassifier(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.embed = nn.EmbeddingBag(VOCAB, dim)
        self.hidden = nn.Linear(dim, dim)
        self.out = nn.Linear(dim, CLASSES)

    def forward(self, tokens):
        return self.out(F.silu(self.hidden(self.embed(tokens))) * 4.0)


@dataclass
class Report:
    agree: bool
    batches: int


def compare_predictions(model, compiled, loader):
    agree = True
    with torch.no_grad():
        for tokens in loader:
            agree = agree and torch.equal(compiled(tokens).argmax(-1), model(tokens).argmax(-1))
    return Report(agree, len(loader))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=3)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = IntentClassifier().to(DEVICE).eval()
    compiled = torch.compile(model)
    loader = [torch.randint(0, VOCAB, (16, 6), device=DEVICE) for _ in range(args.batches)]
    report = compare_predictions(model, compiled, loader)
    assert report.agree, f"predictions differ in {report.batches} batches"


if __name__ == "__main__":
    main()
