import torch


@torch.compile(dynamic=True)
def f(x, y):
    y[x + 10] += y[x + 10]


x = torch.tensor([[-10, -10]])
y = torch.ones(2, 1)
f(x, y)
assert torch.equal(y, torch.tensor([[2.0], [1.0]]))
