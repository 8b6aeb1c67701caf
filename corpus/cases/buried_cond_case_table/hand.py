import torch


def f(x):
    return torch.linalg.cond(torch.arctan(x))


x = torch.ones(2, 2)
torch.testing.assert_close(torch.compile(f)(x), f(x))
