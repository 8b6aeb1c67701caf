"""Train a small tabular regressor with SGD and a step learning-rate schedule, its residual trunk compiled.

Only the trunk (pre-norm residual blocks) goes through torch.compile; the embedding of the inputs and the head
stay eager. An eager copy of the model is trained on the same batches, and after training the two must agree
on held-out data within a tolerance. Inductor's variance is planted wrong (_planted.py).
"""

import argparse
import copy
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


class ResidualBlock(nn.Module):
    def __init__(self, width, expansion=2, dropout=0.0):
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.fc1 = nn.Linear(width, width * expansion)
        self.fc2 = nn.Linear(width * expansion, width)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        return x + self.dropout(self.fc2(F.relu(self.fc1(self.norm(x)))))


class Trunk(nn.Module):
    def __init__(self, width, depth):
        super().__init__()
        self.blocks = nn.Sequential(*(ResidualBlock(width) for _ in range(depth)))
        self.norm = nn.LayerNorm(width)

    def forward(self, x):
        return self.norm(self.blocks(x))


class Regressor(nn.Module):
    def __init__(self, features, width=16, depth=2):
        super().__init__()
        self.embed = nn.Linear(features, width)
        self.trunk = Trunk(width, depth)
        self.head = nn.Linear(width, 1)

    def forward(self, x):
        return self.head(self.trunk(self.embed(x))).squeeze(-1)


def make_data(n, features, seed):
    coef = torch.randn(features, generator=torch.Generator().manual_seed(0))
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, features, generator=g)
    y = x @ coef + 0.5 * torch.sin(3 * x[:, 0]) + 0.1 * torch.randn(n, generator=g)
    return x, y


def loader(x, y, batch, epoch):
    g = torch.Generator().manual_seed(1000 + epoch)
    order = torch.randperm(len(x), generator=g)
    for i in range(0, len(x), batch):
        idx = order[i:i + batch]
        yield x[idx], y[idx]


def train(model, x, y, args, tag):
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    started = time.perf_counter()
    for epoch in range(args.epochs):
        total, count = 0.0, 0
        for xb, yb in loader(x, y, args.batch, epoch):
            loss = F.smooth_l1_loss(model(xb), yb)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total, count = total + loss.item() * len(xb), count + len(xb)
        sched.step()
        print(f"[{tag}] epoch {epoch} lr {sched.get_last_lr()[0]:.4f} loss {total / count:.4f}")
    print(f"[{tag}] {time.perf_counter() - started:.1f}s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=0.05)
    parser.add_argument("--tolerance", type=float, default=1e-3)
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Regressor(features=8)
    eager = copy.deepcopy(model)
    model.trunk = torch.compile(model.trunk)

    x, y = make_data(128, 8, seed=1)
    x_val, y_val = make_data(64, 8, seed=2)
    train(model, x, y, args, "compiled")
    train(eager, x, y, args, "eager")

    model.eval()
    eager.eval()
    with torch.no_grad():
        pred_compiled, pred_eager = model(x_val), eager(x_val)
    max_abs = (pred_compiled - pred_eager).abs().max().item()
    mse_c, mse_e = F.mse_loss(pred_compiled, y_val).item(), F.mse_loss(pred_eager, y_val).item()
    print(f"val mse compiled {mse_c:.5f} eager {mse_e:.5f} max |diff| {max_abs:.3g}")
    if max_abs > args.tolerance:
        raise RuntimeError(f"compiled model diverged from eager: max abs diff {max_abs:.3g} > {args.tolerance}")


if __name__ == "__main__":
    main()
