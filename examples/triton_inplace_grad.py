"""A custom Triton op whose backward kernel writes the gradient into its input buffer.

The op computes y = x**3 with a Triton forward kernel and a Triton backward kernel. To save memory the backward
kernel stores dx = 3 * x**2 * dy over x itself. But x here is the output of torch.tanh, which autograd saved
for tanh's own backward (d tanh = 1 - tanh**2). Triton writes through raw pointers, so the tensor's version
counter never moves and autograd raises nothing: tanh's backward just reads the overwritten buffer and the
gradients of everything before the op come out silently wrong.

On a machine without CUDA the kernels run under Triton's interpreter (TRITON_INTERPRET=1, which triton reads
when @triton.jit decorates a function, so it must be set before the kernels are defined).
"""

import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
BLOCK = 1024


@triton.jit
def cube_forward_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(y_ptr + offsets, x * x * x, mask=mask)


@triton.jit
def cube_backward_kernel(x_ptr, dy_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    dy = tl.load(dy_ptr + offsets, mask=mask)
    # The bug: dx goes into x's own buffer, which autograd may still need.
    tl.store(x_ptr + offsets, 3.0 * x * x * dy, mask=mask)


class TritonCube(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        x = x.contiguous()
        y = torch.empty_like(x)
        n = x.numel()
        cube_forward_kernel[(triton.cdiv(n, BLOCK),)](x, y, n, BLOCK=BLOCK)
        ctx.save_for_backward(x)
        return y

    @staticmethod
    def backward(ctx, dy):
        (x,) = ctx.saved_tensors
        dy = dy.contiguous()
        n = x.numel()
        cube_backward_kernel[(triton.cdiv(n, BLOCK),)](x, dy, n, BLOCK=BLOCK)
        return x


def reference_cube(x):
    return x * x * x


class Block(nn.Module):
    """linear -> layer_norm -> tanh -> cube -> linear -> gelu -> residual -> layer_norm -> linear -> mean."""

    def __init__(self, cube, dim=32):
        super().__init__()
        self.cube = cube
        self.inp = nn.Linear(dim, dim)
        self.norm1 = nn.LayerNorm(dim)
        self.mid = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.out = nn.Linear(dim, 4)

    def forward(self, x):
        h = self.inp(x)
        h = self.norm1(h)
        h = torch.tanh(h)
        c = self.cube(h)
        m = F.gelu(self.mid(c))
        h = self.norm2(m + h)
        logits = self.out(h)
        return torch.mean(logits * logits)


def gradients(cube):
    torch.manual_seed(0)
    model = Block(cube).to(device)
    x = torch.randn(16, 32, device=device)
    loss = model(x)
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


grad = gradients(TritonCube.apply)
grad_ref = gradients(reference_cube)
print("max abs gradient difference:", (grad - grad_ref).abs().max().item())
assert torch.allclose(grad, grad_ref, atol=1e-5), "gradients of the Triton op differ from the reference"
