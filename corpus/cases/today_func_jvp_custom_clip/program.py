"""Sensitivity analysis of a saturating controller with forward-mode AD (torch.func.jvp), compiled.

The actuator saturation is a custom ``autograd.Function`` whose ``jvp`` treats the clip as transparent (the
controller's documented linearization, so saturated channels still report sensitivity). The analysis pushes
a set of probe directions through the controller with ``torch.func.jvp``; the compiled analysis is compared
to eager for every probe and every gain setting.

Upstream: https://github.com/pytorch/pytorch/issues/192985 (Dynamo inlines the forward of an
autograd.Function under ``torch.func.jvp`` and silently drops its custom ``jvp``, so the compiled tangents
are those of plain clamp: zero on saturated channels).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn


class SoftSaturation(torch.autograd.Function):
    @staticmethod
    def forward(u, limit):
        return torch.clamp(u, -limit, limit)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad, None

    @staticmethod
    def jvp(ctx, du, dlimit):
        return du


class Controller(nn.Module):
    def __init__(self, states=4, actuators=3, limit=1.0):
        super().__init__()
        self.gain = nn.Linear(states, actuators, bias=False)
        self.limit = limit

    def forward(self, state):
        return SoftSaturation.apply(self.gain(state), self.limit)


@dataclass
class Analysis:
    gains: tuple = (0.5, 2.0, 4.0)
    probes: tuple = ("position", "velocity", "all")


def probe_direction(name, states=4):
    d = torch.zeros(states)
    if name == "position":
        d[0] = 1.0
    elif name == "velocity":
        d[1] = 1.0
    else:
        d[:] = 0.5
    return d


def sensitivity(controller, state, direction):
    _, tangent = torch.func.jvp(controller, (state,), (direction,))
    return tangent


def run(analysis: Analysis):
    torch.manual_seed(0)
    state = torch.tensor([0.8, -1.5, 0.3, 2.0])
    problems = []
    for gain in analysis.gains:
        controller = Controller()
        with torch.no_grad():
            controller.gain.weight.copy_(torch.randn(3, 4) * gain)
        compiled = torch.compile(sensitivity)
        for probe in analysis.probes:
            direction = probe_direction(probe)
            expected = sensitivity(controller, state, direction)
            actual = compiled(controller, state, direction)
            if not torch.allclose(actual, expected, atol=1e-6):
                problems.append(f"gain {gain} probe {probe}: eager {expected.tolist()} compiled {actual.tolist()}")
    return problems


if __name__ == "__main__":
    problems = run(Analysis())
    print("\n".join(problems) or "sensitivities match")
    assert not problems, f"{len(problems)} sensitivity probes disagree"
