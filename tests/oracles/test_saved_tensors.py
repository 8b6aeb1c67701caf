"""The harness's saved-tensor hooks: silent in-place writes to saved tensors are caught, nothing else changes."""

from __future__ import annotations

import pytest
import torch

from oracles.api import NEEDS_SAVED_TENSORS, RecordedRun
from oracles.harness import Harness
from oracles.inplace import inplace


@pytest.fixture
def harness():
    torch._dynamo.reset()
    h = Harness(frozenset({NEEDS_SAVED_TENSORS}), seed=0)
    h.install()
    yield h
    h.uninstall()
    torch._dynamo.reset()


def verdict(h: Harness):
    return inplace(RecordedRun(inplace_violations=h.inplace_violations))


class _ScaleGrad(torch.autograd.Function):
    """Identity forward; its backward may scribble over a tensor that an earlier op saved."""

    @staticmethod
    def forward(ctx, x, victim, corrupt):
        ctx.victim, ctx.corrupt = victim, corrupt
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        if ctx.corrupt:
            ctx.victim.data.mul_(2)  # .data writes do not bump the version counter
        else:
            ctx.victim.data.clone().mul_(2)
        return grad, None, None


@pytest.mark.parametrize("corrupt", [True, False])
def test_backward_writing_into_a_saved_tensor(harness, corrupt):
    x = torch.randn(5, requires_grad=True)
    y = x.tanh()  # TanhBackward0 saves its result y
    _ScaleGrad.apply(y, y, corrupt).sum().backward()
    found = verdict(harness)
    assert found.fires is corrupt
    if corrupt:
        assert found.signature == "inplace: TanhBackward0"


@pytest.mark.parametrize("corrupt", [True, False])
def test_data_write_between_forward_and_backward(harness, corrupt):
    x = torch.randn(3, 70, 80, requires_grad=True)  # large enough to be fingerprinted by checksums
    y = x.exp()
    (y.data.mul_(2) if corrupt else y.data.clone().mul_(2))
    y.sum().backward()
    assert verdict(harness).fires is corrupt


def _version_error() -> str:
    x = torch.randn(3, requires_grad=True)
    y = x.tanh()
    y.mul_(2)
    with pytest.raises(RuntimeError) as raised:
        y.sum().backward()
    return str(raised.value)


def test_version_check_still_raises_like_autograd(harness):
    with_hooks = _version_error()
    harness.uninstall()
    assert with_hooks == _version_error()
    assert verdict(harness).fires is False


def test_batch_norm_running_stats_are_not_violations(harness):
    model = torch.nn.BatchNorm1d(3)
    model(torch.randn(4, 3, requires_grad=True)).sum().backward()
    assert not verdict(harness).fires


def test_compiled_functions_work_under_the_hooks(harness):
    @torch.compile(backend="aot_eager")
    def f(x):
        return (x.sin() * 2).tanh()

    x = torch.randn(4, requires_grad=True)
    f(x).sum().backward()
    expected = x.detach().clone().requires_grad_()
    (expected.sin() * 2).tanh().sum().backward()
    assert torch.allclose(x.grad, expected.grad)
    assert not verdict(harness).fires


def test_torch_func_transforms_run_as_without_the_hooks(harness):
    """torch.func.grad raises when saved-tensor hooks are pushed; plain python pushes none, so neither may we."""

    def loss(w):
        return (w.sin() * w).sum()

    w = torch.randn(4)
    assert torch.allclose(torch.func.grad(loss)(w), w.cos() * w + w.sin())
    # the hooks are back afterwards: a later in-place corruption is still caught
    x = torch.randn(5, requires_grad=True)
    y = x.tanh()
    _ScaleGrad.apply(y, y, True).sum().backward()
    assert verdict(harness).signature == "inplace: TanhBackward0"
