import torch


def f(x):
    y = torch.zeros(2)
    y[:1] = x
    return y.requires_grad


assert torch.compile(f)(torch.ones(1, requires_grad=True))
