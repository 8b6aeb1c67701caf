import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr):
    y = tl.load(x_ptr)
    t = 0.7978845608028654 * (y + 0.0044715 * y * y * y)
    e = tl.exp(-2.0 * t)
    tl.store(out_ptr, 0.5 * y * (1.0 + (1.0 - e) / (1.0 + e)))


x = torch.full((1,), 2.0)
out = torch.empty(1)
kernel[1,](x, out)
assert torch.allclose(out, F.gelu(x, approximate="tanh"))
