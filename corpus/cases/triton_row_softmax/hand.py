import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.exp(tl.load(x_ptr + offsets, mask=offsets < n, other=0.0))
    tl.store(out_ptr + offsets, x / tl.sum(x, axis=0), mask=offsets < n)


x = torch.zeros(1)
out = torch.empty(1)
kernel[1,](x, out, 1, BLOCK=2)
torch.testing.assert_close(out, torch.softmax(x, 0))
