"""Gradient-parity suite for the gated tanh activation of our recurrent cell, eager against torch.compile.

Every row of the case table builds its inputs at its dtype, shape and input scale, runs the cell eagerly and
compiled, and compares the outputs and the gradients of every input. Disagreements are collected as messages
carrying the numbers; the suite fails if there are any. Inductor's tanh gradient is planted wrong (_planted.py).
"""

import argparse
import math
from dataclasses import dataclass, field

import torch

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


def gated_tanh_cell(x, h, w_in, w_rec, gate_bias, scale):
    """One step of a minimal gated recurrent cell: candidate tanh state mixed with the old one by a sigmoid gate."""
    pre = x @ w_in + h @ w_rec
    candidate = torch.tanh(scale * pre)
    gate = torch.sigmoid(pre.mean(-1, keepdim=True) + gate_bias)
    return gate * candidate + (1 - gate) * h


@dataclass
class Case:
    name: str
    dtype: torch.dtype
    batch: int
    width: int
    scale: float
    seed: int = 0
    tols: dict = field(default_factory=dict)

    def tolerance(self):
        default = {torch.float32: (1e-4, 1e-5), torch.float64: (1e-7, 1e-9)}[self.dtype]
        return self.tols.get("grad", default)


CASES = [
    Case("tiny", torch.float32, 1, 4, 0.5),
    Case("wide", torch.float64, 4, 16, 0.25, seed=2),
    Case("saturating", torch.float64, 2, 8, 4.0, seed=3),
]


def make_inputs(case, device):
    g = torch.Generator().manual_seed(case.seed)
    shapes = {
        "x": (case.batch, case.width),
        "h": (case.batch, case.width),
        "w_in": (case.width, case.width),
        "w_rec": (case.width, case.width),
        "gate_bias": (1,),
    }
    inputs = {}
    for name, shape in shapes.items():
        t = torch.randn(shape, generator=g, dtype=torch.float64) / math.sqrt(shape[0])
        inputs[name] = t.to(device=device, dtype=case.dtype).requires_grad_()
    return inputs


def run(fn, inputs, scale):
    leaves = {k: v.detach().clone().requires_grad_() for k, v in inputs.items()}
    out = fn(**leaves, scale=scale)
    weights = torch.linspace(-1, 1, out.numel(), dtype=out.dtype, device=out.device).reshape(out.shape)
    (out * weights).sum().backward()
    return out.detach(), {k: v.grad for k, v in leaves.items()}


def compare(case, eager, compiled, problems):
    rtol, atol = case.tolerance()
    out_e, grads_e = eager
    out_c, grads_c = compiled
    if not torch.allclose(out_c, out_e, rtol=rtol, atol=atol):
        problems.append(f"{case.name} {case.dtype} output: max diff {(out_c - out_e).abs().max().item():.3g}")
    for name in grads_e:
        ge, gc = grads_e[name], grads_c[name]
        if gc is None or not torch.allclose(gc, ge, rtol=rtol, atol=atol):
            worst = (gc - ge).abs().argmax().item() if gc is not None else 0
            problems.append(
                f"{case.name} {case.dtype} grad {name} eager={ge.flatten()[worst].item():.6g} "
                f"compiled={gc.flatten()[worst].item() if gc is not None else None}"
            )


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--only", nargs="*", default=None)
    args = parser.parse_args()
    compiled_cell = torch.compile(gated_tanh_cell, dynamic=False)
    problems = []
    for case in CASES:
        if args.only and case.name not in args.only:
            continue
        inputs = make_inputs(case, args.device)
        eager = run(gated_tanh_cell, inputs, case.scale)
        compiled = run(compiled_cell, inputs, case.scale)
        compare(case, eager, compiled, problems)
        print(f"{case.name:12s} {str(case.dtype):14s} checked")
    for line in problems:
        print("MISMATCH", line)
    assert not problems, f"{len(problems)} gradient mismatches:\n" + "\n".join(problems)


if __name__ == "__main__":
    main()
