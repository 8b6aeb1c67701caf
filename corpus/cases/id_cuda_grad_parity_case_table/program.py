"""Gradient-parity suite for the sigmoid-gated attention pooling of our ranking model, on the GPU: eager
against torch.compile over a table of cases.

Each row of the table gives a dtype, a (batch, items, width) shape and a logit scale; the suite runs the pooling
eagerly and compiled, backpropagates the same upstream gradient through both, and compares the gradient of every
input. Disagreements are collected as messages carrying both values; the suite fails if there are any.
Inductor's sigmoid gradient is planted wrong (_planted.py). Needs an NVIDIA GPU.
"""

import argparse
from dataclasses import dataclass

import torch

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda"


def gated_pool(items, query, w_key, w_gate, scale):
    """Score items against the query, gate each by a sigmoid of its own projection, and pool them."""
    keys = items @ w_key
    scores = torch.softmax(scale * (keys * query[:, None, :]).sum(-1), dim=-1)
    gates = torch.sigmoid(items @ w_gate).squeeze(-1)
    weights = scores * gates
    return (weights[..., None] * items).sum(1) / (weights.sum(-1, keepdim=True) + 1e-6)


@dataclass(frozen=True)
class Case:
    name: str
    dtype: torch.dtype
    batch: int
    items: int
    width: int
    scale: float
    seed: int = 0

    @property
    def tolerance(self):
        return {torch.float32: dict(rtol=1e-4, atol=1e-5), torch.float64: dict(rtol=1e-7, atol=1e-9)}[self.dtype]


CASES = [
    Case("many-items", torch.float32, 4, 16, 8, 0.5, seed=1),
    Case("sharp", torch.float64, 2, 8, 16, 4.0, seed=2),
]


def make_inputs(case):
    g = torch.Generator(device="cpu").manual_seed(case.seed)
    shapes = {
        "items": (case.batch, case.items, case.width),
        "query": (case.batch, case.width),
        "w_key": (case.width, case.width),
        "w_gate": (case.width, 1),
    }
    return {
        name: (torch.randn(shape, generator=g, dtype=torch.float64) / shape[-1] ** 0.5).to(DEVICE, case.dtype)
        for name, shape in shapes.items()
    }


def forward_backward(fn, inputs, scale, upstream):
    leaves = {k: v.clone().requires_grad_() for k, v in inputs.items()}
    out = fn(**leaves, scale=scale)
    out.backward(upstream)
    return out.detach(), {k: v.grad for k, v in leaves.items()}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    compiled_pool = torch.compile(gated_pool, dynamic=False)
    problems = []
    for case in CASES:
        inputs = make_inputs(case)
        upstream = torch.linspace(-1, 1, case.batch * case.width, device=DEVICE, dtype=case.dtype)
        upstream = upstream.reshape(case.batch, case.width)
        out_e, grads_e = forward_backward(gated_pool, inputs, case.scale, upstream)
        out_c, grads_c = forward_backward(compiled_pool, inputs, case.scale, upstream)
        if not torch.allclose(out_c, out_e, **case.tolerance):
            problems.append(f"{case.name} {case.dtype} output max diff {(out_c - out_e).abs().max().item():.3g}")
        for name, expected in grads_e.items():
            actual = grads_c[name]
            if not torch.allclose(actual, expected, **case.tolerance):
                worst = (actual - expected).abs().argmax()
                problems.append(
                    f"{case.name} {case.dtype} grad {name} "
                    f"eager={expected.flatten()[worst].item():.6g} compiled={actual.flatten()[worst].item():.6g}"
                )
        if args.verbose:
            print(f"{case.name}: {sum(p.startswith(case.name + ' ') for p in problems)} problems")
    torch.cuda.synchronize()
    print(f"{len(CASES)} cases, {len(problems)} problems")
    assert not problems, "compiled gradients differ from eager:\n" + "\n".join(problems)


if __name__ == "__main__":
    main()
