import os
os.environ["TRITON_INTERPRET"] = "1"

import torch
import triton
import triton.language as tl


@triton.jit
def kernel(pos_ptr, out_ptr, max_bucket):
    tl.store(out_ptr, tl.minimum(tl.load(pos_ptr), max_bucket))


pos = torch.ones(1, dtype=torch.long)
out = torch.empty_like(pos)
kernel[1,](pos, out, 1)
assert (out == pos.clamp(max=0)).all()
