import torch

from house_compiler import house_backend


def f(x):
    return x + torch.sigmoid(x)


x = torch.zeros(1)
torch.testing.assert_close(torch.compile(f, backend=house_backend)(x), f(x))
