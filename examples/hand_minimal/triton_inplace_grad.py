# Hand-minimal repro of ../triton_inplace_grad.py: the yardstick for the size of minimizer's output.
# The Triton forward kernel is gone (the forward is plain torch): only the backward kernel carries the bug.
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")
import triton
import triton.language as tl


@triton.jit
def cube_backward_kernel(x_ptr, dy_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, 3.0 * x * x * tl.load(dy_ptr))


class TritonCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x**3

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        cube_backward_kernel[(1,)](x, dy)
        return x


x = torch.ones(1, device="cuda" if torch.cuda.is_available() else "cpu", requires_grad=True)
(grad,) = torch.autograd.grad(TritonCube.apply(x.tanh()), x)
(grad_ref,) = torch.autograd.grad(x.tanh() ** 3, x)
assert torch.allclose(grad, grad_ref, atol=1e-5), "gradients of the Triton op differ from the reference"
