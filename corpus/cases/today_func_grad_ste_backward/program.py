"""Quantization-aware calibration: gradients of a fake-quant loss through a straight-through rounding op.

``RoundSTE`` is an ``autograd.Function`` (functorch style, with ``setup_context``) whose forward rounds and
whose backward passes the gradient straight through. The calibration computes the gradient of the
reconstruction loss with respect to the latent (pre-rounding) weights with ``torch.func.grad``; that gradient computation is
compiled, and compared to eager for each layer shape and bit width.

Upstream: https://github.com/pytorch/pytorch/issues/193279 (Dynamo inlines the forward of an
autograd.Function under ``torch.func.grad`` and silently drops its custom backward, so the compiled gradient
is the one of plain ``round``: zero).
"""

import itertools
from dataclasses import dataclass

import torch


class RoundSTE(torch.autograd.Function):
    @staticmethod
    def forward(x):
        return torch.round(x)

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, grad):
        return grad


def fake_quant(latent, scale, bits):
    """Quantize latent weights (already in units of ``scale``) to signed ``bits``-bit integers."""
    qmax = 2 ** (bits - 1) - 1
    q = torch.clamp(RoundSTE.apply(latent), -qmax - 1, qmax)
    return q * scale


def reconstruction_loss(latent, x, target, scale, bits):
    approx = x @ fake_quant(latent, scale, bits).T
    return ((approx - target) ** 2).mean()


def latent_grad(latent, x, target, scale, bits):
    return torch.func.grad(reconstruction_loss)(latent, x, target, scale, bits)


@dataclass
class Layer:
    name: str
    out_features: int
    in_features: int


LAYERS = (Layer("q_proj", 8, 16), Layer("mlp_up", 16, 8))
BITS = (4, 8)


def calibrate():
    compiled_grad = torch.compile(latent_grad)
    results = {}
    for layer, bits in itertools.product(LAYERS, BITS):
        torch.manual_seed(layer.in_features * 100 + bits)
        w = torch.randn(layer.out_features, layer.in_features)
        x = torch.randn(32, layer.in_features)
        target = x @ w.T
        scale = w.abs().max() / (2 ** (bits - 1) - 1)
        latent = w / scale
        results[(layer.name, bits)] = (
            latent_grad(latent, x, target, scale, bits),
            compiled_grad(latent, x, target, scale, bits),
        )
    return results


if __name__ == "__main__":
    torch.manual_seed(0)
    results = calibrate()
    failed = []
    for key, (eager, compiled) in results.items():
        ok = torch.allclose(compiled, eager, rtol=1e-4, atol=1e-6)
        print(key, "grad norm eager", round(eager.norm().item(), 5), "compiled", round(compiled.norm().item(), 5))
        if not ok:
            failed.append(key)
    assert not failed, f"compiled calibration gradients differ for {failed}"
