import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, b_ptr, out_ptr, n_cols):
    offs = tl.arange(0, 2)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + tl.load(b_ptr + offs // n_cols))


x = torch.zeros(2)
b = torch.arange(2.0)
out = torch.empty(2)
kernel[1,](x, b, out, 2)
assert torch.allclose(out, x + b)
