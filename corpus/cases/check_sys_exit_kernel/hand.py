import os
import sys
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(x_ptr, gamma_ptr, out_ptr):
    cols = tl.arange(0, 2)
    tl.store(out_ptr + cols, tl.load(x_ptr + cols) * tl.load(gamma_ptr + cols * 0))


x = torch.ones(2)
gamma = torch.arange(2.0)
out = torch.empty(2)
kernel[1,](x, gamma, out)
if (out - x * gamma).abs().max().item() > 0:
    sys.exit(1)
