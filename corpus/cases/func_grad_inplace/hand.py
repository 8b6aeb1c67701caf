import torch


def g(x):
    y = torch.zeros_like(x)
    y[:, 0] += x[:, 2]
    y[:, 0] += x[:, 2]
    return y.sum()


x = torch.ones(1, 3)
torch.testing.assert_close(torch.compile(torch.func.grad(g))(x), torch.func.grad(g)(x))
