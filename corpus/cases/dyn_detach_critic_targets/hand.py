import torch


def f(x):
    y = x * 2
    y.detach_()
    return y.requires_grad


assert not torch.compile(f)(torch.ones(1, requires_grad=True))
