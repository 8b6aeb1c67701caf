# Minimized by minimizer 0.1.0 from row_softmax_cuda.py
# torch 2.11.0+cu130 on cuda (NVIDIA H100 80GB HBM3); oracle: script
# signature: AssertionError: Tensor-likes are not close! | Mismatched elements: N / N (N%) | Greatest absolute difference: N at index [shape] (up to N allowed) | Greatest relative difference: N at index [shape] (up to N allowed) [kernels: row_softmax_kernel] [compared: kernel row_softmax_kernel, softmax]
# size: 511 -> 185 tokens, 61 -> 17 lines, 16 -> 7 torch ops
# work: 274 oracle calls (248 cache hits), 121 s

import torch
import triton
import triton.language as tl


@triton.jit
def row_softmax_kernel(x_ptr, out_ptr, row_stride, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(x_ptr + row * row_stride + offsets, mask=mask, other=0.0)
    x = x - tl.max(x, axis=0)
    numerator = tl.exp(x)
    denominator = tl.sum(numerator, axis=0)
    tl.store(out_ptr + row * row_stride + offsets, numerator / denominator, mask=mask)


x = torch.ones(1, device="cuda")
out = torch.empty_like(x)
row_softmax_kernel[1,](x, out, 1, 1, 2)
torch.testing.assert_close(out, torch.softmax(x, -1))
