import torch

from _planted import plant_miscompile

plant_miscompile()
x = torch.ones(1, requires_grad=True)
torch.compile(torch.tanh)(x).backward()
assert torch.allclose(x.grad, 1 - torch.tanh(x.detach()) ** 2)
