import torch


def f(x, y):
    return x + y


torch.compile(f)(torch.ones(1, dtype=torch.complex64), torch.ones((), dtype=torch.complex64))
