"""Finetune a small pre-norm encoder whose LayerNorms run our Triton kernel, then validate the kernel on the
activations the finetuned model actually produces.

The "pretrained" encoder is built from a fixed seed, its input projection frozen, and the rest finetuned with
Adam on a synthetic sequence-labelling task. Forward hooks record what enters each LayerNorm on a held-out
batch; the kernel's output on those activations must match F.layer_norm (np.testing.assert_allclose).
Runs under Triton's interpreter on CPU.
"""

import os

os.environ["TRITON_INTERPRET"] = "1"

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def layer_norm_kernel(x_ptr, w_ptr, b_ptr, out_ptr, stride, n_cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / n_cols
    xc = x - mean
    var = tl.sum(xc * xc, axis=0) / n_cols
    rstd = 1.0 / tl.sqrt(var + eps)
    w = tl.load(w_ptr + cols, mask=mask, other=1.0)
    b = tl.load(b_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + row * stride + cols, xc * rstd * w + b, mask=mask)


def triton_layer_norm(x, weight, bias, eps=1e-5):
    shape = x.shape
    x2 = x.reshape(-1, shape[-1]).contiguous()
    out = torch.empty_like(x2)
    layer_norm_kernel[(x2.shape[0],)](x2, weight, bias, out, x2.stride(0), x2.shape[1], eps,
                                      BLOCK=triton.next_power_of_2(x2.shape[1]))
    return out.reshape(shape)


class TritonLayerNormFn(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, bias, eps):
        ctx.save_for_backward(x, weight, bias)
        ctx.eps = eps
        return triton_layer_norm(x, weight, bias, eps)

    @staticmethod
    def backward(ctx, grad):
        x, weight, bias = ctx.saved_tensors
        with torch.enable_grad():
            leaves = [t.detach().requires_grad_() for t in (x, weight, bias)]
            out = F.layer_norm(leaves[0], leaves[0].shape[-1:], leaves[1], leaves[2], ctx.eps)
            grads = torch.autograd.grad(out, leaves, grad)
        return (*grads, None)


class TritonLayerNorm(nn.LayerNorm):
    def forward(self, x):
        return TritonLayerNormFn.apply(x, self.weight, self.bias, self.eps)


class Block(nn.Module):
    def __init__(self, width):
        super().__init__()
        self.norm = TritonLayerNorm(width)
        self.mix = nn.Conv1d(width, width, kernel_size=3, padding=1, groups=width)
        self.ff = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))

    def forward(self, x):
        h = self.norm(x)
        h = self.mix(h.transpose(1, 2)).transpose(1, 2)
        return x + self.ff(h)


class Encoder(nn.Module):
    def __init__(self, features, width, depth, tags):
        super().__init__()
        self.proj = nn.Linear(features, width)
        self.blocks = nn.ModuleList(Block(width) for _ in range(depth))
        self.final_norm = TritonLayerNorm(width)
        self.tagger = nn.Linear(width, tags)

    def forward(self, x):
        x = self.proj(x)
        for block in self.blocks:
            x = block(x)
        return self.tagger(self.final_norm(x))


def pretrained_encoder(features, width, depth, tags):
    torch.manual_seed(1234)
    model = Encoder(features, width, depth, tags)
    model.proj.requires_grad_(False)
    return model


def synthetic_task(n, length, features, tags, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, length, features, generator=g) + 0.5
    score = x.cumsum(1)[..., :tags]
    return x, score.argmax(-1)


def finetune(model, x, y, steps, lr, batch):
    params = [p for p in model.parameters() if p.requires_grad]
    opt = torch.optim.Adam(params, lr=lr, betas=(0.9, 0.98))
    for step in range(steps):
        idx = torch.arange(step * batch, (step + 1) * batch) % len(x)
        logits = model(x[idx])
        loss = F.cross_entropy(logits.flatten(0, 1), y[idx].flatten())
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 3 == 0 or step == steps - 1:
            acc = (logits.argmax(-1) == y[idx]).float().mean().item()
            print(f"finetune step {step:2d} loss {loss.item():.4f} acc {acc:.3f}")


def record_norm_inputs(model, x):
    seen = []
    hooks = [m.register_forward_hook(lambda mod, args, out: seen.append((mod, args[0].detach())))
             for m in model.modules() if isinstance(m, TritonLayerNorm)]
    with torch.no_grad():
        model(x)
    for h in hooks:
        h.remove()
    return seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--lr", type=float, default=2e-3)
    args = parser.parse_args()
    features, width, depth, tags, length = 5, 24, 2, 3, 8
    model = pretrained_encoder(features, width, depth, tags)
    x, y = synthetic_task(64, length, features, tags, seed=0)
    finetune(model, x, y, args.steps, args.lr, batch=8)
    x_val, _ = synthetic_task(4, length, features, tags, seed=1)
    module, activations = record_norm_inputs(model, x_val)[-1]
    kernel_out = triton_layer_norm(activations, module.weight.detach(), module.bias.detach(), module.eps)
    reference = F.layer_norm(activations, (width,), module.weight.detach(), module.bias.detach(), module.eps)
    np.testing.assert_allclose(kernel_out.numpy(), reference.numpy(), rtol=1e-5, atol=1e-5)
    print("layer norm kernel matches on finetuned activations")


if __name__ == "__main__":
    main()
