import torch
import torch.nn.functional as F
from liger_kernel.transformers.functional import liger_cross_entropy

x = torch.randn(2, 4, device="cuda", requires_grad=True)
t = torch.zeros(2, dtype=torch.long, device="cuda")
expected, = torch.autograd.grad(F.cross_entropy(torch.softmax(x, -1), t), x)
fused, = torch.autograd.grad(liger_cross_entropy(torch.softmax(x, -1), t), x)
assert torch.allclose(fused, expected), "liger gradients differ from torch's"
