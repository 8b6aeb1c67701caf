"""Evaluation report of a small sequence regressor: eager and compiled metrics collected in a dict.

Written for the corpus of check shapes (issue 46): the check reads a metrics dict of ``.item()`` floats.
Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse
import json

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Regressor(nn.Module):
    def __init__(self, features=6, hidden=12):
        super().__init__()
        self.inp = nn.Linear(features, hidden)
        self.mix = nn.Linear(hidden, hidden)
        self.out = nn.Linear(hidden, 1)

    def forward(self, x):
        h = F.silu(self.inp(x))
        h = h + F.silu(self.mix(h))
        return self.out(h.mean(1)).squeeze(-1)


def evaluate(model, x, y):
    with torch.no_grad():
        pred = model(x)
    return pred, F.mse_loss(pred, y)


def collect_metrics(model, compiled, x, y):
    pred_eager, loss_eager = evaluate(model, x, y)
    pred_compiled, loss_compiled = evaluate(compiled, x, y)
    return {
        "loss_eager": loss_eager.item(),
        "loss_compiled": loss_compiled.item(),
        "max_abs_err": (pred_compiled - pred_eager).abs().max().item(),
        "samples": len(y),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--tolerance", type=float, default=1e-4)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Regressor().to(DEVICE).eval()
    compiled = torch.compile(model)
    x = torch.randn(args.samples, 5, 6, device=DEVICE)
    y = torch.randn(args.samples, device=DEVICE)
    metrics = collect_metrics(model, compiled, x, y)
    print(json.dumps(metrics, indent=2))
    assert metrics["max_abs_err"] < args.tolerance, "compiled predictions drift from eager"


if __name__ == "__main__":
    main()
