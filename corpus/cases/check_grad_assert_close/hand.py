import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.ones(1)
w = torch.ones(1, requires_grad=True)
torch.compile(lambda x, w: F.silu(x) * w)(x, w).backward()
torch.testing.assert_close(w.grad, F.silu(x))
