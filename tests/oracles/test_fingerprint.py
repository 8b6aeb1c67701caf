"""The fingerprint of a run's compiled calls: equal exactly when the calls an oracle sees are equal."""

from __future__ import annotations

import pytest
import torch
from torch._dynamo.utils import counters

from oracles.api import NEEDS_CALLS
from oracles.fingerprint import CallFingerprint
from oracles.harness import Harness


@pytest.fixture
def run_compiled():
    """Run ``body(compile)`` under a fresh harness with a fingerprint; return the fingerprint."""

    def run(body) -> CallFingerprint:
        torch._dynamo.reset()
        counters.clear()
        fingerprint = CallFingerprint()
        harness = Harness(frozenset({NEEDS_CALLS}), fingerprint=fingerprint)
        harness.install()
        try:
            body(torch.compile)
        finally:
            harness.uninstall()
            torch._dynamo.reset()
        return fingerprint

    return run


def sin_plus_one(x):
    return x.sin() + 1


def renamed_sin_plus_one(values):
    shifted = values.sin()
    return shifted + 1


def cos_plus_one(x):
    return x.cos() + 1


def call(fn, x, **options):
    return lambda compile: compile(fn, backend="aot_eager", **options)(x)


def test_code_the_compiler_never_sees_does_not_change_the_key(run_compiled):
    x = torch.arange(6.0)

    def with_eager_code_around(compile):
        unused = torch.ones(3) * 2  # noqa: F841 - code outside the compiled function
        compile(renamed_sin_plus_one, backend="aot_eager")(x)

    key = run_compiled(call(sin_plus_one, x)).key()
    assert key is not None and key == run_compiled(with_eager_code_around).key()


@pytest.mark.parametrize(
    "other",
    [
        call(cos_plus_one, torch.arange(6.0)),  # another op
        call(sin_plus_one, torch.arange(6.0) + 1),  # other values
        call(sin_plus_one, torch.arange(7.0)),  # another shape
        call(sin_plus_one, torch.arange(6.0).double()),  # another dtype
        call(sin_plus_one, torch.arange(6.0).requires_grad_()),  # requires_grad
        call(sin_plus_one, torch.arange(6.0), dynamic=True),  # compile options
    ],
)
def test_what_a_call_depends_on_changes_the_key(run_compiled, other):
    keys = run_compiled(call(sin_plus_one, torch.arange(6.0))).key(), run_compiled(other).key()
    assert None not in keys and keys[0] != keys[1]


def test_a_second_compiled_call_means_no_key(run_compiled):
    def twice(compile):
        compiled = compile(sin_plus_one, backend="aot_eager")
        compiled(compiled(torch.arange(6.0)) * 0.5)  # eager code between the calls, on a compiled output

    fingerprint = run_compiled(twice)
    assert (fingerprint.graphs, fingerprint.calls) == (1, 2)
    assert fingerprint.key() is None
    assert "more than one compiled call" in fingerprint.why_not


def test_grad_mode_at_the_call_changes_the_key(run_compiled):
    x = torch.arange(6.0, requires_grad=True)

    def without_grad(compile):
        with torch.no_grad():
            compile(sin_plus_one, backend="aot_eager")(x)

    keys = run_compiled(call(sin_plus_one, x)).key(), run_compiled(without_grad).key()
    assert None not in keys and keys[0] != keys[1]


def test_module_parameters_are_part_of_the_key(run_compiled):
    def linear_with(weight_value):
        def body(compile):
            layer = torch.nn.Linear(3, 2)
            with torch.no_grad():
                layer.weight.fill_(weight_value)
                layer.bias.zero_()
            compile(layer, backend="aot_eager")(torch.ones(1, 3))

        return body

    keys = run_compiled(linear_with(0.5)).key(), run_compiled(linear_with(0.25)).key()
    assert None not in keys and keys[0] != keys[1]


def test_a_graph_break_means_no_key(run_compiled):
    def breaks(x):
        y = x.sin()
        print("eager code inside the compiled call")
        return y + 1

    fingerprint = run_compiled(call(breaks, torch.arange(6.0)))
    assert fingerprint.key() is None
    assert "graph break" in fingerprint.why_not


def test_a_backend_defined_in_the_script_means_no_key(run_compiled):
    def scripted_backend(gm, example_inputs):
        return gm.forward

    scripted_backend.__module__ = "__main__"  # as if the candidate script defined it
    fingerprint = run_compiled(lambda compile: compile(sin_plus_one, backend=scripted_backend)(torch.arange(6.0)))
    assert fingerprint.key() is None
    assert "backend is defined in the script" in fingerprint.why_not


def test_a_run_without_compiled_calls_has_no_key(run_compiled):
    assert run_compiled(lambda compile: sin_plus_one(torch.arange(6.0))).key() is None


def test_a_custom_op_means_no_key(run_compiled):
    @torch.library.custom_op("minimizer_test::double_it", mutates_args=())
    def double_it(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    @double_it.register_fake
    def _(x):
        return torch.empty_like(x)

    fingerprint = run_compiled(call(lambda x: double_it(x) + 1, torch.arange(6.0)))
    assert fingerprint.key() is None
    assert "registered outside torch" in fingerprint.why_not


def test_aten_ops_in_a_graph_are_described_by_name():
    from oracles.fingerprint import _describe_callable

    assert _describe_callable(torch.ops.aten.sin.default) == "aten.sin.default"


def test_a_backend_named_is_what_is_registered_under_the_name(run_compiled):
    from torch._dynamo import register_backend

    def lowering(gm, example_inputs):
        return gm.forward

    fingerprint = run_compiled(lambda compile: compile(sin_plus_one, backend="aot_eager")(torch.arange(6.0)))
    assert fingerprint.key() is not None
    # a candidate that dropped the import registering its backend must not share the verdict of one that has it
    def unregistered_call(compile):
        with pytest.raises(Exception, match="fp_test_edge"):
            compile(sin_plus_one, backend="fp_test_edge")(torch.arange(6.0))

    unregistered = run_compiled(unregistered_call)
    assert unregistered.key() is None and "no backend is registered as 'fp_test_edge'" in unregistered.why_not
    register_backend(name="fp_test_edge", compiler_fn=lowering)
    registered = run_compiled(lambda compile: compile(sin_plus_one, backend="fp_test_edge")(torch.arange(6.0)))
    assert registered.key() is not None and registered.key() != fingerprint.key()


def test_the_eager_backend_means_no_key(run_compiled):
    # There Dynamo's capture is what is tested: a wrong capture (a custom backward dropped) gives one graph for
    # code whose eager runs differ, so a verdict taken by graph would be another candidate's.
    fingerprint = run_compiled(lambda compile: compile(sin_plus_one, backend="eager")(torch.arange(6.0)))
    assert fingerprint.key() is None
    assert "backend 'eager'" in fingerprint.why_not


def test_the_eager_backend_passed_as_the_callable_registered_means_no_key_too(run_compiled):
    from torch._dynamo.backends.registry import lookup_backend

    eager = lookup_backend("eager")
    fingerprint = run_compiled(lambda compile: compile(sin_plus_one, backend=eager)(torch.arange(6.0)))
    assert fingerprint.key() is None and "backend 'eager'" in fingerprint.why_not
