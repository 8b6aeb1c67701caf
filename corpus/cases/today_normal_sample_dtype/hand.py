import torch


def f(loc, scale):
    return torch.distributions.Normal(loc, scale).sample()


loc, scale = torch.zeros(8, dtype=torch.float16), torch.ones(8)
assert torch.compile(f)(loc, scale).dtype == f(loc, scale).dtype
