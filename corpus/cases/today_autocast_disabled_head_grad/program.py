"""Mixed-precision training step with a float32 router head, compiled, compared to an eager twin.

The trunk runs under ``torch.autocast('cpu', dtype=torch.bfloat16)``; the router must stay in float32, so its
forward disables autocast locally and upcasts. Only the router is compiled. After one backward the router's
weight gradient of the compiled model must match the eager twin's.

Upstream: https://github.com/pytorch/pytorch/issues/179804 (torch.compile: the backward of a region compiled
under an inner ``autocast(enabled=False)`` inside an outer autocast does not match eager; fires with
backend="aot_eager" too, so the fault is in AOTAutograd).
"""

import copy
from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass
class StepConfig:
    batch: int = 4
    width: int = 64
    experts: int = 8
    seeds: tuple = (0, 1)


class Trunk(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.proj(x))


class Router(nn.Module):
    def __init__(self, width, experts):
        super().__init__()
        self.gate = nn.Linear(width, experts, bias=False)

    def forward(self, h):
        with torch.autocast("cpu", enabled=False):
            return h.float() @ self.gate.weight.float().T


class RoutedModel(nn.Module):
    def __init__(self, cfg: StepConfig, compile_router: bool):
        super().__init__()
        self.trunk = Trunk(cfg.width)
        self.router = Router(cfg.width, cfg.experts)
        self.route = torch.compile(self.router) if compile_router else self.router

    def forward(self, x):
        with torch.autocast("cpu", dtype=torch.bfloat16):
            h = self.trunk(x)
            logits = self.route(h)
        return logits


def train_step(model, x, target):
    logits = model(x)
    loss = nn.functional.cross_entropy(logits, target)
    loss.backward()
    return loss.detach(), model.router.gate.weight.grad.clone()


def compare(cfg: StepConfig):
    failures = []
    for seed in cfg.seeds:
        torch.manual_seed(seed)
        eager = RoutedModel(cfg, compile_router=False)
        compiled = copy.deepcopy(eager)
        compiled.route = torch.compile(compiled.router)
        x = torch.randn(cfg.batch, cfg.width)
        target = torch.randint(0, cfg.experts, (cfg.batch,))
        loss_e, grad_e = train_step(eager, x, target)
        loss_c, grad_c = train_step(compiled, x, target)
        try:
            torch.testing.assert_close(loss_c, loss_e)
            torch.testing.assert_close(grad_c, grad_e)
        except AssertionError as err:
            failures.append(f"seed {seed}: {str(err).splitlines()[0]} max diff {(grad_c - grad_e).abs().max():.3g}")
    return failures


if __name__ == "__main__":
    failures = compare(StepConfig())
    print("\n".join(failures) or "router gradients match")
    if failures:
        raise SystemExit(1)
