"""Each built-in oracle on hand-made recordings: a case it fires on and a near-identical one it does not."""

from __future__ import annotations

import math

import pytest
import torch

from oracles.api import CallRecord, ExceptionInfo, InplaceViolation, RecordedRun, SideResult
from oracles.crash import crash
from oracles.gradient import gradient
from oracles.inplace import inplace
from oracles.numerical import compare_tensors, numerical
from oracles.registry import BUILTINS, load_oracle
from oracles.requires_grad import requires_grad


def side(*outputs, grads=None, exception=None, requires=None):
    return SideResult(
        outputs=None if exception else list(outputs),
        exception=exception,
        grads=grads,
        requires_grad=requires,
        has_grad_fn=requires,
    )


def run_of(*calls, **kwargs) -> RecordedRun:
    return RecordedRun(used_compile=True, calls=list(calls), **kwargs)


def call(eager, compiled, reference=None, grad_names=()):
    return CallRecord(0, "f", eager, compiled, reference, list(grad_names))


BOOM = ExceptionInfo("RuntimeError", "index 7 is out of bounds for size (3, 4)", stage="inductor-lowering")


def test_builtins_load_by_name():
    for name in BUILTINS:
        found = load_oracle(name)
        assert found.name == name
        assert found.summary


# -- crash ------------------------------------------------------------------------------------------------


def test_crash_fires_when_only_compiled_raises():
    x = torch.ones(3)
    verdict = crash(run_of(call(side(x), side(exception=BOOM))))
    assert verdict.fires
    assert verdict.signature == "crash: compiled raised: RuntimeError: index N is out of bounds for size [shape] [inductor-lowering]"


def test_crash_quiet_when_both_sides_raise():
    assert not crash(run_of(call(side(exception=BOOM), side(exception=BOOM)))).fires


def test_crash_fires_when_only_eager_raises():
    verdict = crash(run_of(call(side(exception=ExceptionInfo("ValueError", "bad")), side(torch.ones(1)))))
    assert verdict.signature == "crash: eager raised: ValueError: bad"


def test_crash_backward_only():
    record = call(side(torch.ones(1), grads=[]), side(torch.ones(1), grads=None))
    record.compiled.grad_exception = BOOM
    assert crash(run_of(record)).signature.startswith("crash: compiled backward raised: RuntimeError")
    record.compiled.grad_exception = None
    assert not crash(run_of(record)).fires


def test_crash_fires_on_compiler_exception_outside_any_call():
    escaped = ExceptionInfo("torch._dynamo.exc.BackendCompilerFailed", "backend raised", stage="dynamo-tracing")
    verdict = crash(RecordedRun(exception=escaped, used_compile=True))
    assert verdict.signature == "crash: compiled raised: torch._dynamo.exc.BackendCompilerFailed: backend raised [dynamo-tracing]"
    plain = ExceptionInfo("ValueError", "from the script")
    assert not crash(RecordedRun(exception=plain, used_compile=True)).fires


# -- numerical ----------------------------------------------------------------------------------------------


def _triple(delta: float):
    ref = torch.linspace(-1, 1, 50, dtype=torch.float64)
    eager = (ref + 1e-7).float()
    return eager, eager + delta, ref


def test_numerical_fires_on_value_gap():
    eager, compiled, ref = _triple(1e-2)
    verdict = numerical(run_of(call(side(eager), side(compiled), side(ref))))
    assert verdict.fires and verdict.signature == "numerical: float32 value"
    assert "ratio" in verdict.detail


def test_numerical_quiet_within_tolerance():
    eager, compiled, ref = _triple(1e-6)
    assert not numerical(run_of(call(side(eager), side(compiled), side(ref)))).fires


def test_numerical_judges_against_reference_not_eager():
    # Eager is itself far from float64; a compiled result just as far (the other way) is not a bug.
    ref = torch.linspace(-1, 1, 50, dtype=torch.float64)
    eager, compiled = (ref + 1e-2).float(), (ref - 1.5e-2).float()
    assert not numerical(run_of(call(side(eager), side(compiled), side(ref)))).fires
    assert numerical(run_of(call(side(eager), side((ref - 5e-2).float()), side(ref)))).fires


def test_numerical_nan_and_inf():
    eager = torch.ones(4)
    assert numerical(run_of(call(side(eager), side(torch.tensor([1, math.nan, 1, 1]))))).signature == "numerical: float32 nan"
    assert numerical(run_of(call(side(eager), side(torch.tensor([1, math.inf, 1, 1]))))).signature == "numerical: float32 inf"
    both = torch.tensor([1, math.nan, 1, math.inf])
    assert not numerical(run_of(call(side(both), side(both.clone())))).fires


def test_numerical_integer_outputs_must_match():
    a = torch.arange(4)
    assert numerical(run_of(call(side(a), side(a + 1)))).signature == "numerical: int64 value"
    assert not numerical(run_of(call(side(a, 3), side(a.clone(), 3)))).fires


def test_numerical_outputs_in_other_containers_are_another_bug_whatever_their_values():
    # A lowering reduced to `return [x]` gives a list where eager gives a tensor: not the wrong tensor it was.
    from torch.utils._pytree import tree_flatten

    eager, compiled = torch.ones(4), torch.ones(4) * 2
    as_tensor, as_list = str(tree_flatten(eager)[1]), str(tree_flatten([compiled])[1])
    other = numerical(run_of(call(SideResult([eager], structure=as_tensor), SideResult([compiled], structure=as_list))))
    assert other.fires and other.signature == "numerical: outputs structure" and "list" in other.detail
    same = numerical(run_of(call(SideResult([eager], structure=as_tensor), SideResult([compiled], structure=as_tensor))))
    assert same.signature == "numerical: float32 value"


def test_numerical_most_severe_finding_decides():
    eager = torch.ones(4)
    value_gap = call(side(eager), side(eager + 1))
    nan_gap = call(side(eager), side(torch.full((4,), math.nan)))
    assert numerical(run_of(value_gap, nan_gap)).signature == "numerical: float32 nan"


def test_compare_tensors_shape_and_dtype():
    assert compare_tensors(torch.ones(2), torch.ones(3)).kind == "shape"
    assert compare_tensors(torch.ones(2), torch.ones(2, dtype=torch.float64)).kind == "dtype"
    assert compare_tensors(torch.ones(2, dtype=torch.float16), torch.ones(2, dtype=torch.float16) + 1e-3) is None


# -- requires-grad ------------------------------------------------------------------------------------------


def test_requires_grad_fires_when_compiled_drops_it():
    x = torch.ones(2)
    verdict = requires_grad(run_of(call(side(x, requires=[True]), side(x, requires=[False]))))
    assert verdict.fires and verdict.signature == "requires-grad: eager=True compiled=False"


def test_requires_grad_quiet_when_flags_agree():
    x = torch.ones(2)
    assert not requires_grad(run_of(call(side(x, requires=[True]), side(x, requires=[True])))).fires


def test_requires_grad_reads_live_tensors_in_hand_made_records():
    leaf = torch.ones(2, requires_grad=True)
    verdict = requires_grad(run_of(call(side(leaf * 2), side(leaf))))
    assert verdict.signature == "requires-grad: grad_fn eager=True compiled=False"


# -- gradient -----------------------------------------------------------------------------------------------


def test_gradient_fires_on_parameter_gap():
    eager, compiled, ref = _triple(5e-2)
    names = ["input:0", "parameter:weight"]
    record = call(
        side(torch.ones(1), grads=[eager, eager]),
        side(torch.ones(1), grads=[eager, compiled]),
        side(torch.ones(1), grads=[ref, ref]),
        names,
    )
    verdict = gradient(run_of(record))
    assert verdict.fires and verdict.signature == "gradient: parameter float32 value"
    assert "parameter:weight" in verdict.detail


def test_gradient_quiet_when_gradients_agree():
    eager, compiled, ref = _triple(1e-7)
    record = call(side(torch.ones(1), grads=[eager]), side(torch.ones(1), grads=[compiled]), side(torch.ones(1), grads=[ref]), ["input:0"])
    assert not gradient(run_of(record)).fires


def test_gradient_missing_on_one_side():
    record = call(side(torch.ones(1), grads=[torch.ones(2)]), side(torch.ones(1), grads=[None]), None, ["input:0"])
    assert gradient(run_of(record)).signature == "gradient: input float32 missing"


# -- inplace ------------------------------------------------------------------------------------------------


def test_inplace_fires_on_violation():
    run = RecordedRun(inplace_violations=[InplaceViolation("TanhBackward0", "3 of 3 elements changed")])
    assert inplace(run).signature == "inplace: TanhBackward0"


def test_inplace_quiet_without_violation():
    assert not inplace(RecordedRun()).fires


@pytest.mark.parametrize("found", [crash, numerical, requires_grad, gradient, inplace])
def test_oracles_quiet_on_an_empty_run(found):
    assert not found(RecordedRun()).fires


# -- script ------------------------------------------------------------------------------------------------

from oracles.script import script  # noqa: E402

_ASSERT = ExceptionInfo("AssertionError", "outputs differ", assert_text="torch.allclose(a, b)")


def test_script_fires_on_a_plain_failure_without_compile():
    verdict = script(RecordedRun(exception=_ASSERT))
    assert verdict.fires and verdict.signature == "AssertionError: assert torch.allclose(_, _) -- outputs differ"


def test_script_failure_that_needs_compile_is_marked_so():
    verdict = script(RecordedRun(exception=_ASSERT, used_compile=True, eager_rerun_done=True))
    assert verdict.fires and verdict.signature.endswith("[only under torch.compile]")


def test_script_failure_that_also_happens_eagerly_is_marked_as_not_a_compiler_bug():
    run = RecordedRun(exception=_ASSERT, used_compile=True, eager_rerun_done=True, eager_rerun_exception=_ASSERT)
    verdict = script(run)
    only = script(RecordedRun(exception=_ASSERT, used_compile=True, eager_rerun_done=True))
    assert verdict.fires and verdict.signature.endswith("[also without torch.compile]")
    assert verdict.signature != only.signature


def test_script_candidate_that_dropped_compile_shows_a_different_signature():
    with_compile = script(RecordedRun(exception=_ASSERT, used_compile=True, eager_rerun_done=True))
    without = script(RecordedRun(exception=_ASSERT))
    assert with_compile.signature != without.signature


def test_script_signature_tells_apart_asserts_that_differ_only_in_what_failed():
    def signature(operands):
        failure = ExceptionInfo("AssertionError", "losses differ", assert_text="not mismatched", operands=operands)
        return script(RecordedRun(exception=failure, used_compile=True, eager_rerun_done=True)).signature

    assert "[operands: mismatched=['focal']]" in signature("mismatched=['focal']")
    assert signature("mismatched=['focal']") != signature("mismatched=['kl']")


def test_same_comparison_holds_the_values_compared_and_counts_strays_by_kernel():
    from oracles.script import same_comparison

    def run(values, strays):
        failure = ExceptionInfo("AssertionError", "not close", compared="kernel k, mult", compared_values=values)
        return RecordedRun(exception=failure, kernels=["k"], kernel_strays=strays)

    held = same_comparison(run("3f2a", ["k reads 1 past w_ptr, 1 past x_ptr"]))
    assert held.fires and held.signature.endswith("[out of bounds: k reads] [compared: kernel k, mult] [values: 3f2a]")
    assert same_comparison(run("3f2a", ["k reads 1 past x_ptr"])).signature == held.signature
    assert same_comparison(run("9c01", ["k reads 1 past x_ptr"])).signature != held.signature
    assert not same_comparison(run(None, [])).fires  # nothing to hold: no kernel's output compared
    assert script(run("3f2a", ["k reads 1 past x_ptr"])).signature != script(run("3f2a", [])).signature


def test_same_difference_holds_how_a_kernels_output_differs_not_what_it_is_compared_with():
    from oracles.script import same_difference
    from tests.bugs import evidence_parts

    def run(difference, evidence="allclose of kernel k, add+mul", used_compile=False):
        kind, origins = evidence_parts(evidence)
        failure = ExceptionInfo("AssertionError", "not close", compared_difference=difference, evidence=evidence,
                                evidence_kind=kind, evidence_origins=tuple(origins))
        return RecordedRun(exception=failure, kernels=["k"], used_compile=used_compile)

    held = same_difference(run("5be0"))
    assert held.fires and held.signature.endswith("[kernels: k] [allclose: difference 5be0]")
    assert same_difference(run("5be0", "allclose of kernel k, input")).signature == held.signature  # the reference changed
    assert same_difference(run("77aa")).signature != held.signature
    assert not same_difference(run("5be0", "allclose of input, add")).fires  # no kernel's output compared any more
    assert not same_difference(run(None)).fires
    assert not same_difference(run("5be0", used_compile=True)).fires
    # Measured against more of the kernel's own output, the difference checks the kernel against nothing.
    against = same_difference(run("5be0", "< of kernel k then abs+sub against clamp(min=0, max=5), number"))
    itself = same_difference(run("5be0", "< of kernel k then abs+clamp(min=0, max=5)+sub, number"))
    assert against.signature == held.signature.replace("allclose:", "<:") != itself.signature


def test_evidence_is_read_back_operand_by_operand():
    from tests.bugs import evidence_parts

    assert evidence_parts("allclose of kernel k(block=4) of add, clamp(min=0, max=5)") == (
        "allclose", ["kernel k(block=4) of add", "clamp(min=0, max=5)"]
    )


def test_a_difference_computed_both_ways_alike_digests_alike():
    from oracles.comparison import difference_digest

    x, scale, shift = torch.tensor([1.5, -0.25]), torch.tensor([0.3, 0.7]), torch.tensor([0.1, 2.0])
    by_row, by_column = shift[[0, 0]], shift
    with_common = difference_digest((x * scale + by_row, x * scale + by_column))
    assert with_common is not None and with_common == difference_digest((by_row, by_column))
    assert difference_digest((by_row * 2, by_column * 2)) != with_common  # apart by other amounts
    assert difference_digest((shift, shift.clone())) is None  # no difference: nothing to hold
    assert difference_digest((shift, shift[:1])) is None  # two shapes


def test_a_numerical_bug_says_which_call_of_its_target_it_showed_in():
    fine, wrong = torch.ones(2), torch.tensor([1.0, float("nan")])
    calls = [
        CallRecord(0, "f", side(fine), side(fine), side(fine.double())),
        CallRecord(1, "g", side(fine), side(fine), side(fine.double())),
        CallRecord(2, "f", side(fine), side(wrong), side(fine.double())),
    ]
    assert numerical(run_of(*calls)).found.call == 1  # the second call of f, the third compiled call
