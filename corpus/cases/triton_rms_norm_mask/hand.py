import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + cols, mask=cols <= n_cols, other=0.0)
    tl.store(out_ptr + cols, x / tl.sqrt(tl.sum(x * x, axis=0) / n_cols), mask=cols < n_cols)


x = torch.ones(2)
out = torch.empty(1)
kernel[1,](x, out, 1, BLOCK=2)
torch.testing.assert_close(out, x[:1] * torch.rsqrt(x[:1].pow(2).mean()))
