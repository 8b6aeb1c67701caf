import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(res_ptr, out_ptr):
    res = tl.load(res_ptr)
    out = res
    out = out + res
    tl.store(out_ptr, out)


res = torch.ones(1)
out = torch.empty(1)
kernel[1,](res, out)
assert torch.allclose(out, res)
