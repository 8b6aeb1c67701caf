import torch


def f(x):
    return torch.Tensor((x + 1).size())


x = torch.randn(1, 4)
assert torch.compile(f, fullgraph=True)(x).shape == f(x).shape
