import os
os.environ["TRITON_INTERPRET"] = "1"

import numpy as np
import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    mean = tl.sum(x, axis=0) / n_cols
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / n_cols
    tl.store(out_ptr + cols, xc / tl.sqrt(var + 1e-5), mask=mask)


x = torch.tensor([0.0, 2.0, 4.0])
out = torch.empty(3)
kernel[1,](x, out, 3, BLOCK=4)
np.testing.assert_allclose(out.numpy(), F.layer_norm(x, (3,)).numpy(), rtol=1e-5, atol=1e-5)
