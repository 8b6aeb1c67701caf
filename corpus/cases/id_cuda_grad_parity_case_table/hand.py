import torch

from _planted import plant_miscompile

plant_miscompile()
x = torch.zeros(1, device="cuda", requires_grad=True)
torch.compile(torch.sigmoid)(x).backward()
s = torch.sigmoid(x.detach())
assert torch.allclose(x.grad, s * (1 - s))
