"""Language-model head trained with a fused cross-entropy Triton kernel plus a z-loss (logsumexp squared, as in
PaLM), checked against torch's losses before training. Runs under Triton's interpreter on CPU.

Written for the corpus (the liger-kernel bug class, not an upstream report): the kernel saves memory by writing
the loss's gradient into the logits in place during forward; the z-loss computed earlier saved those logits for
its backward, so its gradient is computed from the overwritten values.
"""

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn
import triton
import triton.language as tl

log = logging.getLogger("lmhead")


@triton.jit
def fused_ce_kernel(logits_ptr, target_ptr, loss_ptr, row_stride, n_cols, inv_rows, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offsets = tl.arange(0, BLOCK)
    mask = offsets < n_cols
    x = tl.load(logits_ptr + row * row_stride + offsets, mask=mask, other=float("-inf"))
    target = tl.load(target_ptr + row)
    x_max = tl.max(x, axis=0)
    exp = tl.exp(x - x_max)
    total = tl.sum(exp, axis=0)
    x_target = tl.sum(tl.where(offsets == target, x, 0.0), axis=0)
    tl.store(loss_ptr + row, (tl.log(total) + x_max - x_target) * inv_rows)
    grad = (exp / total - tl.where(offsets == target, 1.0, 0.0)) * inv_rows
    tl.store(logits_ptr + row * row_stride + offsets, grad, mask=mask)


class FusedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets):
        rows, cols = logits.shape
        losses = torch.empty(rows, dtype=logits.dtype)
        fused_ce_kernel[(rows,)](
            logits, targets, losses, logits.stride(0), cols, 1.0 / rows, BLOCK=triton.next_power_of_2(cols)
        )
        ctx.save_for_backward(logits.detach())  # now holds the gradient
        return losses.sum()

    @staticmethod
    def backward(ctx, grad_output):
        (grad,) = ctx.saved_tensors
        return grad * grad_output, None


@dataclass
class HeadConfig:
    hidden: int = 16
    vocab: int = 24
    tokens: int = 8
    z_weight: float = 1e-2
    lr: float = 1e-2


class LMHead(nn.Module):
    def __init__(self, config: HeadConfig):
        super().__init__()
        self.norm = nn.LayerNorm(config.hidden)
        self.proj = nn.Linear(config.hidden, config.vocab, bias=False)

    def forward(self, hidden):
        return self.proj(self.norm(hidden))


def losses(head, hidden, targets, z_weight, fused):
    logits = head(hidden)
    z_loss = torch.logsumexp(logits, dim=-1).pow(2).mean() * z_weight
    if fused:
        ce = FusedCrossEntropy.apply(logits, targets)
    else:
        ce = nn.functional.cross_entropy(logits, targets)
    return ce + z_loss


def parity_check(config: HeadConfig) -> None:
    torch.manual_seed(0)
    head = LMHead(config)
    hidden = torch.randn(config.tokens, config.hidden)
    targets = torch.randint(0, config.vocab, (config.tokens,))
    grads = []
    for fused in (False, True):
        head.zero_grad()
        losses(head, hidden, targets, config.z_weight, fused).backward()
        grads.append(head.proj.weight.grad.clone())
    log.warning("max grad diff %.3g", (grads[0] - grads[1]).abs().max().item())
    torch.testing.assert_close(grads[1], grads[0])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tokens", type=int, default=8)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    parity_check(HeadConfig(tokens=args.tokens))


if __name__ == "__main__":
    main()
