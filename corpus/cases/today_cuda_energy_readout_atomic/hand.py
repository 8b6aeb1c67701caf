import torch


def f(x, bias, idx):
    src = x + bias
    out = torch.zeros(1, 1, device="cuda")
    return out.scatter_reduce(0, idx[:, None].expand_as(src), src, "sum")


x = torch.arange(3.0, device="cuda")[:, None]
bias = torch.ones(1, device="cuda")
idx = torch.zeros(3, dtype=torch.long, device="cuda")
torch.testing.assert_close(torch.compile(f)(x, bias, idx), f(x, bias, idx))
