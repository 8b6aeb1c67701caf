"""Train a heteroscedastic regressor on the GPU with SGD and a one-cycle schedule, its feature tower compiled.

The model predicts a mean and a (softplus) standard deviation and is trained with the Gaussian negative
log-likelihood. Only the feature tower goes through torch.compile; the two heads stay eager. An eager copy is
trained on the same batches; at the end the compiled model's predictions must match it within a tolerance.
Inductor's softplus is planted wrong (_planted.py). Needs an NVIDIA GPU.
"""

import argparse
import copy
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda"


class Tower(nn.Module):
    def __init__(self, features, width, depth):
        super().__init__()
        layers = []
        for i in range(depth):
            layers += [nn.Linear(features if i == 0 else width, width), nn.Softplus()]
        self.net = nn.Sequential(*layers)

    def forward(self, x):
        return self.net(x)


class HeteroscedasticRegressor(nn.Module):
    def __init__(self, features, width=32, depth=2):
        super().__init__()
        self.tower = Tower(features, width, depth)
        self.mean = nn.Linear(width, 1)
        self.log_scale = nn.Linear(width, 1)

    def forward(self, x):
        h = self.tower(x)
        return self.mean(h).squeeze(-1), F.softplus(self.log_scale(h)).squeeze(-1) + 1e-3


def make_data(n, features, seed):
    g = torch.Generator().manual_seed(seed)
    units = torch.tensor([1.0, 2.0, 4.0, 10.0, 3.0, 6.0])[:features]  # raw sensor units, not standardised
    x = (torch.rand(n, features, generator=g) * 4 - 2) * units
    noise = 0.1 + 0.4 * x[:, 0].abs()
    y = torch.sin(2 * x[:, 0]) + x[:, 1] * x[:, 2] / 8 + noise * torch.randn(n, generator=g)
    return x.to(DEVICE), y.to(DEVICE)


def batches(x, y, batch, epoch):
    order = torch.randperm(len(x), generator=torch.Generator().manual_seed(epoch)).to(DEVICE)
    for i in range(0, len(x), batch):
        idx = order[i:i + batch]
        yield x[idx], y[idx]


def fit(model, x, y, args, tag):
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    steps = args.epochs * math.ceil(len(x) / args.batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=args.lr, total_steps=steps, pct_start=0.3)
    for epoch in range(args.epochs):
        nll = []
        for xb, yb in batches(x, y, args.batch, epoch):
            mean, scale = model(xb)
            loss = F.gaussian_nll_loss(mean, yb, scale ** 2)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            opt.step()
            sched.step()
            nll.append(loss.item())
        print(f"[{tag}] epoch {epoch} nll {sum(nll) / len(nll):.4f} lr {sched.get_last_lr()[0]:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = HeteroscedasticRegressor(features=6).to(DEVICE)
    twin = copy.deepcopy(model)
    model.tower = torch.compile(model.tower)

    x, y = make_data(512, 6, seed=1)
    x_test, y_test = make_data(128, 6, seed=2)
    fit(model, x, y, args, "compiled")
    fit(twin, x, y, args, "eager")

    model.eval()
    twin.eval()
    with torch.no_grad():
        (mean_c, scale_c), (mean_e, scale_e) = model(x_test), twin(x_test)
    max_abs = max((mean_c - mean_e).abs().max().item(), (scale_c - scale_e).abs().max().item())
    coverage = ((y_test - mean_e).abs() < 2 * scale_e).float().mean().item()
    print(f"eager 2-sigma coverage {coverage:.3f}; max |compiled - eager| {max_abs:.3g}")
    if max_abs > args.tolerance:
        raise RuntimeError(f"compiled model diverged from its eager twin: max abs diff {max_abs:.3g} > {args.tolerance}")


if __name__ == "__main__":
    main()
