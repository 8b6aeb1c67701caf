"""Bit-exactness audit of a bfloat16 activation library: eager and compiled must agree bit for bit.

The library promises that its compiled activations reproduce eager bitwise (results are hashed for a
deterministic-inference cache). The audit runs every activation on a probe set that includes bf16 subnormals
and compares the raw bit patterns.

Upstream: https://github.com/pytorch/pytorch/issues/185480 (Inductor's bf16 ``F.celu`` (and ``F.elu``)
returns +0.0 for a negative bf16 subnormal input where eager returns a negative subnormal; reported on CUDA,
and on CPU the vectorized kernel (two or more elements) does the same: tiny negative inputs lose their value,
as with exp(x) - 1 in place of expm1).
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

DEVICE = "cpu"

ACTIVATIONS = {
    "relu": nn.ReLU(),
    "celu": nn.CELU(alpha=1.0),
    "elu": nn.ELU(alpha=1.0),
    "tanh": nn.Tanh(),
}


def probe_values():
    values = [-9.183549615799121e-41, -1e-39, -0.5, 0.0, 0.25, 3.0]
    return torch.tensor(values, dtype=torch.float32).to(torch.bfloat16).to(DEVICE)


class Block(nn.Module):
    def __init__(self, act):
        super().__init__()
        self.act = act

    def forward(self, x):
        return self.act(x)


def bits(t):
    return t.contiguous().view(torch.int16).cpu().tolist()


def audit():
    x = probe_values()
    report = {}
    for name, act in ACTIVATIONS.items():
        block = Block(act).to(DEVICE)
        torch._dynamo.reset()
        compiled = torch.compile(block)
        expected, actual = block(x), compiled(x)
        report[name] = (bits(expected) == bits(actual), expected.float().tolist(), actual.float().tolist())
    return report


if __name__ == "__main__":
    report = audit()
    bad = [name for name, (ok, _, _) in report.items() if not ok]
    for name in bad:
        print(name, "eager", report[name][1], "compiled", report[name][2])
    assert not bad, f"activations not bit-exact under compile: {bad}"
    print("all activations bit-exact")
