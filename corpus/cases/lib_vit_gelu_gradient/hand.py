import torch
import torch.nn.functional as F

import vision_backend

x = torch.ones(1, requires_grad=True)
torch.compile(F.gelu, backend="vision")(x).backward()
y = torch.ones(1, requires_grad=True)
F.gelu(y).backward()
torch.testing.assert_close(x.grad, y.grad)
