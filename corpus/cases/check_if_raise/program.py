"""One optimizer step of a small image classifier, compiled against an eager twin, with a parity gate.

Written for the corpus of check shapes (issue 46): the check is ``if not torch.allclose(...): raise``. Inductor's
SiLU is planted wrong (_planted.py).
"""
import argparse
import copy

import torch
import torch.nn as nn

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class ParityError(RuntimeError):
    pass


class TinyConvNet(nn.Module):
    def __init__(self, classes=5):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.SiLU(),
            nn.Conv2d(8, 8, 3, padding=1), nn.SiLU(), nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Linear(8, classes)

    def forward(self, x):
        return self.classifier(self.features(x).flatten(1))


def batches(n, seed):
    g = torch.Generator().manual_seed(seed)
    for _ in range(n):
        yield torch.randn(4, 3, 8, 8, generator=g).to(DEVICE), torch.randint(0, 5, (4,), generator=g).to(DEVICE)


def step(model, opt, images, labels):
    logits = model(images)
    loss = nn.functional.cross_entropy(logits, labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return logits.detach()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batches", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = TinyConvNet().to(DEVICE)
    twin = copy.deepcopy(model)
    compiled = torch.compile(model)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    twin_opt = torch.optim.SGD(twin.parameters(), lr=0.1)
    for i, (images, labels) in enumerate(batches(args.batches, seed=3)):
        got = step(compiled, opt, images, labels)
        want = step(twin, twin_opt, images, labels)
        if not torch.allclose(got, want, atol=1e-4, rtol=1e-4):
            raise ParityError(f"batch {i}: compiled logits differ from eager")
    print("parity ok")


if __name__ == "__main__":
    main()
