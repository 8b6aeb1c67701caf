"""Evaluation report of a blob classifier before it ships compiled: every metric, eager and compiled.

The classifier (ELU MLP) is first fitted eagerly on synthetic Gaussian blobs; the evaluation loop then runs the
held-out batches through the eager model and the compiled one and computes the same metrics dict for both
(loss, accuracy, top-2 accuracy, confidence, Brier score, expected calibration error). Each metric must match
with math.isclose. Inductor's expm1 is planted wrong (_planted.py).
"""

import argparse
import json
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


def make_blobs(n, classes, dim, seed, spread=1.6):
    g = torch.Generator().manual_seed(seed)
    centers = torch.randn(classes, dim, generator=torch.Generator().manual_seed(123)) * 2.5
    labels = torch.randint(0, classes, (n,), generator=g)
    x = centers[labels] + spread * torch.randn(n, dim, generator=g)
    return x, labels


class Classifier(nn.Module):
    def __init__(self, dim, classes, hidden=24):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(dim, hidden), nn.ELU(),
            nn.Linear(hidden, hidden), nn.ELU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        return self.net(x)


def fit(model, x, y, steps=40, lr=1e-2):
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    for step in range(steps):
        loss = F.cross_entropy(model(x), y, label_smoothing=0.05)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            print(f"fit step {step:2d} loss {loss.item():.4f}")


def expected_calibration_error(probs, labels, bins=10):
    conf, pred = probs.max(1)
    correct = (pred == labels).float()
    edges = torch.linspace(0, 1, bins + 1)
    ece = torch.zeros(())
    for lo, hi in zip(edges[:-1], edges[1:]):
        inside = (conf > lo) & (conf <= hi)
        if inside.any():
            ece += inside.float().mean() * (conf[inside].mean() - correct[inside].mean()).abs()
    return ece


def evaluate(model, batches, classes):
    logits, labels = [], []
    with torch.no_grad():
        for xb, yb in batches:
            logits.append(model(xb))
            labels.append(yb)
    logits, labels = torch.cat(logits), torch.cat(labels)
    probs = logits.softmax(-1)
    top2 = logits.topk(2, dim=-1).indices
    onehot = F.one_hot(labels, classes).float()
    return {
        "loss": F.cross_entropy(logits, labels).item(),
        "accuracy": (logits.argmax(-1) == labels).float().mean().item(),
        "top2": (top2 == labels[:, None]).any(-1).float().mean().item(),
        "confidence": probs.max(-1).values.mean().item(),
        "brier": ((probs - onehot) ** 2).sum(-1).mean().item(),
        "ece": expected_calibration_error(probs, labels).item(),
    }


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--classes", type=int, default=4)
    parser.add_argument("--dim", type=int, default=6)
    parser.add_argument("--rel-tol", type=float, default=1e-4)
    args = parser.parse_args()
    torch.manual_seed(0)
    x_train, y_train = make_blobs(256, args.classes, args.dim, seed=1)
    x_test, y_test = make_blobs(96, args.classes, args.dim, seed=2)
    model = Classifier(args.dim, args.classes)
    fit(model, x_train, y_train)
    model.eval()
    compiled = torch.compile(model)
    batches = [(x_test[i:i + 32], y_test[i:i + 32]) for i in range(0, len(x_test), 32)]
    reports = {"eager": evaluate(model, batches, args.classes), "compiled": evaluate(compiled, batches, args.classes)}
    print(json.dumps(reports, indent=2))
    failures = []
    for name, expected in reports["eager"].items():
        actual = reports["compiled"][name]
        if not math.isclose(actual, expected, rel_tol=args.rel_tol, abs_tol=1e-6):
            failures.append(f"{name}: eager {expected:.6f} compiled {actual:.6f} (diff {actual - expected:+.2e})")
    assert not failures, "compiled metrics differ from eager:\n  " + "\n  ".join(failures)
    print("all metrics match")


if __name__ == "__main__":
    main()
