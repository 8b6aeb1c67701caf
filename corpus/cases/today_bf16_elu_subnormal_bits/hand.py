import torch
import torch.nn.functional as F

x = torch.full((2,), -9.183549615799121e-41, dtype=torch.bfloat16)  # a negative bf16 subnormal
e, c = F.elu(x), torch.compile(F.elu)(x)
assert torch.equal(e.view(torch.int16), c.view(torch.int16)), (e.tolist(), c.tolist())
