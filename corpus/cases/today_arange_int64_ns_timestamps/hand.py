import torch


def f():
    return torch.arange(0, 4, dtype=torch.int64) * torch.tensor([10**9])


assert torch.equal(torch.compile(f)(), f())
