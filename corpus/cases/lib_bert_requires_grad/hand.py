import torch
import torch.nn.functional as F

from serve_backend import serve

w = torch.ones(2, 1, requires_grad=True)
assert torch.compile(F.embedding, backend=serve)(torch.tensor([0]), w).requires_grad
