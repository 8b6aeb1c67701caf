import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr):
    x = tl.load(x_ptr)
    tl.store(out_ptr, tl.where(x > -1.0, x, x * 0.1))


x = -torch.ones(1) / 2
out = torch.empty(1)
kernel[1,](x, out)
assert (out - torch.nn.functional.leaky_relu(x, 0.1)).abs().max().item() < 1e-5
