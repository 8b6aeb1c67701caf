import torch


def f(x):
    z = x * 2
    return z * 3, z


x = torch.ones(1, requires_grad=True)
out, z = torch.compile(f)(x)
torch.autograd.grad(out, z)
