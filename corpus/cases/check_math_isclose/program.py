"""Loss parity of a compiled contrastive head during a short training run, compared as Python floats.

Written for the corpus of check shapes (issue 46): ``math.isclose`` on ``.item()`` losses, step by step.
Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class ProjectionHead(nn.Module):
    def __init__(self, dim=10, out=6):
        super().__init__()
        self.fc1 = nn.Linear(dim, dim)
        self.fc2 = nn.Linear(dim, out)

    def forward(self, x):
        return F.normalize(self.fc2(F.silu(self.fc1(x))), dim=-1)


def contrastive_loss(z1, z2, temperature=0.5):
    logits = z1 @ z2.T / temperature
    labels = torch.arange(len(z1), device=z1.device)
    return F.cross_entropy(logits, labels)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    head = ProjectionHead().to(DEVICE)
    reference = copy.deepcopy(head)
    compiled = torch.compile(head)
    views = torch.randn(args.steps, 2, 8, 10, device=DEVICE)
    for step, (a, b) in enumerate(views):
        loss = contrastive_loss(compiled(a), compiled(b))
        expected = contrastive_loss(reference(a), reference(b))
        assert math.isclose(loss.item(), expected.item(), rel_tol=1e-5), f"step {step}: loss differs"
        loss.backward()
        expected.backward()


if __name__ == "__main__":
    main()
