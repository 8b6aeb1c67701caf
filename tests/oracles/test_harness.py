"""The real harness, in-process, on tiny functions compiled with fast custom backends that are wrong on purpose."""

from __future__ import annotations

import pytest
import torch
from torch.utils._pytree import tree_map

from oracles.api import ALL_NEEDS, NEEDS_CALLS, NEEDS_EAGER_RERUN, RecordedRun
from oracles.crash import crash
from oracles.gradient import gradient
from oracles.harness import Harness
from oracles.numerical import numerical
from oracles.requires_grad import requires_grad


@pytest.fixture
def harness():
    torch._dynamo.reset()
    h = Harness(ALL_NEEDS - {NEEDS_EAGER_RERUN}, seed=0)
    h.install()
    yield h
    h.uninstall()
    torch._dynamo.reset()


def recorded(h: Harness, exception=None) -> RecordedRun:
    return RecordedRun(exception=exception, used_compile=h.used_compile, calls=h.calls, inplace_violations=h.inplace_violations)


def _floats(fn):
    return lambda out: tree_map(lambda t: fn(t) if isinstance(t, torch.Tensor) and t.is_floating_point() else t, out)


def off_by_a_bit(gm, example_inputs):
    shift = _floats(lambda t: t + 1e-2)
    return lambda *args: shift(gm(*args))


def without_grad(gm, example_inputs):
    def run(*args):
        with torch.no_grad():
            return gm(*args)

    return run


class _DoubleGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def doubled_grad(gm, example_inputs):
    double = _floats(_DoubleGrad.apply)
    return lambda *args: double(gm(*args))


def failing_at_runtime(gm, example_inputs):
    def run(*args):
        raise RuntimeError("kernel failed with code 7")

    return run


def failing_to_compile(gm, example_inputs):
    raise NotImplementedError("no lowering for aten.sin")


def f(x, w):
    return (x @ w).tanh(), x.sum()


def inputs():
    return torch.randn(4, 3, requires_grad=True), torch.randn(3, 2, requires_grad=True)


def test_correct_backend_fires_nothing(harness):
    out = torch.compile(f, backend="eager")(*inputs())
    assert out[0].requires_grad
    run = recorded(harness)
    assert len(run.calls) == 1 and run.calls[0].target == "f"
    for found in (crash, numerical, requires_grad, gradient):
        assert not found(run).fires, found.name


def test_numerical_fires_on_shifted_outputs(harness):
    torch.compile(f, backend=off_by_a_bit)(*inputs())
    verdict = numerical(recorded(harness))
    assert verdict.fires and verdict.signature == "numerical: float32 value"
    assert not crash(recorded(harness)).fires


def test_requires_grad_fires_when_backend_runs_under_no_grad(harness):
    out = torch.compile(f, backend=without_grad)(*inputs())
    assert not out[0].requires_grad
    assert requires_grad(recorded(harness)).signature == "requires-grad: eager=True compiled=False"
    assert not numerical(recorded(harness)).fires


def test_gradient_fires_when_backward_is_wrong(harness):
    torch.compile(f, backend=doubled_grad)(*inputs())
    run = recorded(harness)
    assert not numerical(run).fires
    verdict = gradient(run)
    assert verdict.fires and verdict.signature == "gradient: input float32 value"


def test_crash_fires_and_script_sees_the_exception(harness):
    compiled = torch.compile(f, backend=failing_at_runtime)
    with pytest.raises(RuntimeError, match="kernel failed"):
        compiled(*inputs())
    verdict = crash(recorded(harness))
    assert verdict.signature == "crash: compiled raised: RuntimeError: kernel failed with code N"


def test_crash_from_backend_compiler_names_the_stage(harness):
    with pytest.raises(Exception) as raised:
        torch.compile(backend=failing_to_compile)(f)(*inputs())
    assert type(raised.value).__name__ == "BackendCompilerFailed"
    assert crash(recorded(harness)).signature.endswith("[backend-compile]")


def test_modules_record_parameters_and_keep_script_state(harness):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5), torch.nn.BatchNorm1d(4))
    compiled = torch.compile(model, backend=doubled_grad)
    assert isinstance(compiled, torch.nn.Module) and compiled.training
    x = torch.randn(5, 3)
    torch.manual_seed(1)
    out = compiled(x)
    after = torch.rand(3)

    torch.manual_seed(0)
    plain = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Dropout(0.5), torch.nn.BatchNorm1d(4))
    torch.manual_seed(1)
    expected = plain(x)
    assert torch.equal(after, torch.rand(3)), "the script's RNG stream moved"
    assert torch.allclose(out, expected), "eager and compiled drew different dropout masks"
    assert int(model[2].num_batches_tracked) == 1, "the eager side updated the real module's buffers"
    assert model[0].weight.grad is None, "recording gradients touched .grad"

    call = harness.calls[0]
    assert call.target == "Sequential"
    assert call.grad_names == ["parameter:0.weight", "parameter:0.bias", "parameter:2.weight", "parameter:2.bias"]
    assert torch.equal(call.eager.outputs[0], call.compiled.outputs[0])
    assert gradient(recorded(harness)).signature == "gradient: parameter float32 value"


def test_module_compile_method_and_decorator_with_kwargs(harness):
    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(2, 2)

        def forward(self, x):
            return self.linear(x).relu()

    model = Model()
    model.compile(backend="eager")
    model(torch.randn(3, 2))

    @torch.compile(backend="eager", fullgraph=True)
    def g(x):
        return x * 2

    g(torch.randn(2))
    assert [c.target for c in harness.calls] == ["Model", "g"]
    assert harness.calls[0].grad_names == ["parameter:linear.weight", "parameter:linear.bias"]


def test_no_grad_and_inference_mode_record_without_gradients(harness):
    compiled = torch.compile(f, backend="eager")
    with torch.no_grad():
        compiled(*inputs())
    with torch.inference_mode():
        compiled(torch.randn(4, 3), torch.randn(3, 2))
    assert [c.compiled.grads for c in harness.calls] == [None, None]
    assert all(c.eager.exception is None and c.compiled.exception is None for c in harness.calls)
    assert not numerical(recorded(harness)).fires


def test_script_backward_still_works_after_recording(harness):
    x, w = inputs()
    out, _ = torch.compile(f, backend="aot_eager")(x, w)
    out.sum().backward()
    expected_x, expected_w = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
    f(expected_x, expected_w)[0].sum().backward()
    assert torch.allclose(x.grad, expected_x.grad) and torch.allclose(w.grad, expected_w.grad)


def test_calls_only_when_asked():
    torch._dynamo.reset()
    h = Harness(frozenset(), seed=0)
    h.install()
    try:
        torch.compile(f, backend="eager")(*inputs())
        assert h.used_compile and h.calls == []
        with h.compile_disabled():
            assert torch.compile(f) is f
    finally:
        h.uninstall()
    assert not hasattr(torch.compile, "__wrapped__")


def test_recording_failure_does_not_change_the_script(harness):
    class Uncopyable(torch.nn.Module):
        def __deepcopy__(self, memo):
            raise TypeError("cannot copy")

        def forward(self, x):
            return x + 1

    out = torch.compile(Uncopyable(), backend="eager")(torch.zeros(2))
    assert torch.equal(out, torch.ones(2))
    assert harness.calls == []


def test_only_calls_needed_skips_reference_and_grads():
    torch._dynamo.reset()
    h = Harness(frozenset({NEEDS_CALLS}), seed=0)
    h.install()
    try:
        torch.compile(f, backend="eager")(*inputs())
    finally:
        h.uninstall()
    assert h.calls[0].reference is None and h.calls[0].compiled.grads is None


COUNTER = torch.zeros(3)


def bump_counter(x):
    COUNTER.add_(1)
    return x + COUNTER


def test_eager_side_does_not_mutate_shared_global_tensors(harness):
    out = torch.compile(bump_counter, backend="eager")(torch.zeros(3))
    assert torch.equal(COUNTER, torch.ones(3)) and torch.equal(out, torch.ones(3))
    assert not numerical(recorded(harness)).fires


def test_compiled_optimizer_step_runs_once(harness):
    param = torch.nn.Parameter(torch.ones(2))
    param.grad = torch.ones(2)
    opt = torch.optim.SGD([param], lr=0.5)
    torch.compile(opt.step, backend="eager")()
    assert torch.equal(param.detach(), torch.full((2,), 0.5))
    assert harness.calls[0].target == "SGD.step"


def test_one_output_from_the_compiled_call_the_rest_from_its_eager_twin():
    """``only_compile="target output PATH"``: the tensor at PATH comes from the compiled call, every other from
    the eager one; where PATH is gone (a candidate that lost the output), everything is eager."""

    import torch

    from oracles.harness import _one_leaf_from, _tensor_paths

    compiled = {"focal": torch.tensor(1.0), "kl": (torch.tensor(2.0), 3)}
    eager = {"focal": torch.tensor(10.0), "kl": (torch.tensor(20.0), 3)}
    assert [path for path, _ in _tensor_paths(compiled)] == ["['focal']", "['kl'][0]"]
    mixed = _one_leaf_from(compiled, eager, "['kl'][0]")
    assert mixed["focal"].item() == 10.0 and mixed["kl"][0].item() == 2.0 and mixed["kl"][1] == 3
    assert _one_leaf_from(compiled, eager, "['dice']")["focal"].item() == 10.0
    assert _one_leaf_from((torch.tensor(1.0),), eager, "[0]") is eager  # another shape of output: all eager


def test_dynamo_optimize_is_recorded_as_the_compile_it_spells(harness):
    optimized = torch._dynamo.optimize(off_by_a_bit)(f)
    optimized(*inputs())

    @torch._dynamo.optimize("eager", nopython=True)
    def g(x):
        return x * 2

    g(torch.randn(2))
    assert [c.target for c in harness.calls] == ["f", "g"]
    assert numerical(recorded(harness)).fires
    torch.compile(torch.sin, backend="eager")(torch.randn(2))  # torch.compile's own call of `optimize` gets the real one
    assert len(harness.calls) == 3


def test_dynamo_optimize_is_torchs_own_again_once_the_harness_is_gone():
    real = torch._dynamo.optimize
    h = Harness(frozenset({NEEDS_CALLS}), seed=0)
    h.install()
    assert torch._dynamo.optimize is not real
    h.uninstall()
    assert torch._dynamo.optimize is real


def test_a_backend_forced_through_the_environment_replaces_the_scripts(monkeypatch):
    from oracles.forced_backend import BACKEND_VARIABLE

    monkeypatch.setenv(BACKEND_VARIABLE, "eager")
    torch._dynamo.reset()
    h = Harness(ALL_NEEDS - {NEEDS_EAGER_RERUN}, seed=0)
    h.install()
    try:
        torch.compile(f, backend=off_by_a_bit)(*inputs())  # the culprit's ladder: does `eager` show the bug?
        assert not numerical(recorded(h)).fires
    finally:
        h.uninstall()
        torch._dynamo.reset()


def test_the_harness_gradients_leave_the_scripts_own_backward_working(harness):
    # A backward that donated its buffers refuses a second pass: the harness's gradients of the compiled side
    # (retain_graph=True) must not turn the script's own backward() into a crash plain python never sees.
    scores = torch.nn.Parameter(torch.tensor([1.703125, 0.0, 1.703125, 0.0, 1.25], dtype=torch.bfloat16))
    loss = torch.compile(
        lambda w, l, m: torch.nn.functional.margin_ranking_loss(w, l, torch.ones_like(w), margin=m), backend="aot_eager"
    )
    for batch in (((0, 1), (2, 3), (4, 1)), ((2, 1), (0, 3))):
        pairs = torch.tensor(batch)
        loss(scores[pairs[:, 0]], scores[pairs[:, 1]], 1.7).backward()
    assert crash(recorded(harness)).fires is False


@pytest.mark.parametrize(("needs", "draws_as_eager"), [({NEEDS_CALLS}, True), ({NEEDS_EAGER_RERUN}, False)])
def test_only_oracles_that_compare_have_random_operators_drawn_as_eager(needs, draws_as_eager):
    # A run observed on its own (the script's check, a crash) leaves the compiler as plain python has it: a bug
    # in a random operator's lowering (Normal(fp16, fp32).sample() turned float32) shows there.
    import torch._inductor.config as inductor

    before = inductor.fallback_random
    inductor.fallback_random = False
    h = Harness(needs, seed=0)
    h.install()
    try:
        assert inductor.fallback_random is draws_as_eager
    finally:
        h.uninstall()
        inductor.fallback_random = before
