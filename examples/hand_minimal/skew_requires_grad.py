# Hand-minimal repro of ../skew_requires_grad.py: the yardstick for the size of minimizer's output.
import torch
from _planted import planted_backend


def f(v):
    S = v * 1
    S[0] = 0
    return S


out = torch.compile(f, backend=planted_backend)(torch.ones(1, requires_grad=True))
assert out.requires_grad, "compiled output lost requires_grad"
