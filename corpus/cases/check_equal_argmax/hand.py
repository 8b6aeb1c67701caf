import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.ones(1)
assert torch.equal(torch.compile(F.silu)(x), F.silu(x))
