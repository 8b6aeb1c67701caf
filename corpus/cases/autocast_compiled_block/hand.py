import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.randn(2, 1)
assert torch.allclose(torch.compile(F.silu)(x), F.silu(x))
