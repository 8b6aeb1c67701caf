import torch
import torch.nn.functional as F

import core_aten_backend

x = torch.ones(1, 1, 2, 1, requires_grad=True)
torch.compile(F.scaled_dot_product_attention, backend="core_aten")(x, x, x).sum().backward()
y = torch.ones(1, 1, 2, 1, requires_grad=True)
F.scaled_dot_product_attention(y, y, y).sum().backward()
torch.testing.assert_close(x.grad, y.grad)
