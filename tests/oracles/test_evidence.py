"""The evidence of a failing check (oracles.evidence): recorded while a script runs, refused where the check
fails for a trivial reason.

Each script runs in this process under the harness, whose ``torch.compile`` returns a callable that adds 0.5 to
the function's result: a compiled call that gives wrong numbers, without compiling anything. Each check shape
is run as a script writes it, then emptied as a reduction would (a helper that returns nothing, a literal
where a comparison was, a reference that no longer passes through the compiled call): the emptied run must
record no evidence, or other evidence.
"""

from __future__ import annotations

import contextlib

import pytest
import torch

from oracles.api import ExceptionInfo
from oracles.capture import exception_info
from oracles.evidence import EvidenceRecorder, TracedFloat, draws_of
from oracles.script import script as script_oracle
from tests.oracles.wrong_compile import failing_run

def _recorded(tmp_path, body: str) -> ExceptionInfo | None:
    with failing_run(tmp_path, body) as (harness, escaped, path):
        return exception_info(escaped, path, harness.kernel_writes, harness.evidence)


# (check as a script writes it, the evidence it records, the check emptied as a reduction would leave it)
SHAPES = {
    "helper returning allclose": (
        """
        def matches(a, b):
            return torch.allclose(a, b)
        assert matches(g(x), f(x)), "differs"
        """,
        "allclose of compiled, other",
        """
        def matches(a, b):
            torch.allclose(a, b)
        assert matches(g(x), f(x)), "differs"
        """,
    ),
    "problems list asserted empty": (
        """
        problems = []
        for name in ["a", "b"]:
            if not torch.allclose(g(x), f(x)):
                problems.append(name)
        assert not problems, problems
        """,
        "allclose of compiled, other",
        """
        problems = ["a", "b"]
        assert not problems, problems
        """,
    ),
    "if not ...: raise": (
        """
        if not torch.allclose(g(x), f(x)):
            raise RuntimeError("parity")
        """,
        "allclose of compiled, other",
        """
        torch.allclose(g(x), f(x))
        raise RuntimeError("parity")
        """,
    ),
    "sys.exit after an error read with item()": (
        """
        err = (g(x) - f(x)).abs().max().item()
        if err > 1e-5:
            sys.exit(1)
        """,
        "> of compiled, number",
        """
        err = (f(x) - f(x) + 1).abs().max().item()
        if err > 1e-5:
            sys.exit(1)
        """,
    ),
    "metrics dict": (
        """
        metrics = {"max_err": (g(x) - f(x)).abs().max().item(), "n": 4}
        assert metrics["max_err"] < 1e-4, "drift"
        """,
        "< of compiled, number",
        """
        metrics = {"max_err": 1.0, "n": 4}
        assert metrics["max_err"] < 1e-4, "drift"
        """,
    ),
    "maximum error over a loop": (
        """
        worst = 0.0
        for batch in [x, x + 1]:
            worst = max(worst, float((g(batch) - f(batch)).abs().max()))
        assert worst < 1e-5
        """,
        "< of compiled, number",
        """
        worst = 0.0
        for batch in [x, x + 1]:
            worst = max(worst, 1.0)
        assert worst < 1e-5
        """,
    ),
    "unittest": (
        """
        import unittest
        class T(unittest.TestCase):
            def test_it(self):
                self.assertTrue(torch.allclose(g(x), f(x)))
        unittest.main(argv=["t"])
        """,
        "allclose of compiled, other",
        """
        import unittest
        class T(unittest.TestCase):
            def test_it(self):
                self.assertTrue(None)
        unittest.main(argv=["t"])
        """,
    ),
    "np.testing on numpy() values": (
        """
        import numpy as np
        np.testing.assert_allclose(g(x).numpy(), f(x).numpy())
        """,
        "np.testing.assert_allclose of compiled, other",
        """
        import numpy as np
        np.testing.assert_allclose(f(x).numpy(), (f(x) + 1).numpy())
        """,
    ),
    "math.isclose on item() floats": (
        """
        assert math.isclose(g(x).sum().item(), f(x).sum().item())
        """,
        "math.isclose of compiled, other",  # the reference's number was computed from a tensor
        """
        assert math.isclose(13.0, f(x).sum().item())
        """,
    ),
    "torch.equal under no_grad": (
        """
        with torch.no_grad():
            same = torch.equal(g(x), f(x))
        assert same
        """,
        "equal of compiled, other",
        """
        with torch.no_grad():
            same = torch.equal(f(x) + 1, f(x))
        assert same
        """,
    ),
    "all() over a lambda": (
        """
        close = lambda a, b: torch.allclose(a, b)
        assert all(close(o, r) for o, r in zip([g(x)], [f(x)]))
        """,
        "allclose of compiled, other",
        """
        close = lambda a, b: torch.allclose(a, b)
        assert all(close(o, r) for o, r in zip([f(x) + 1], [f(x)]))
        """,
    ),
    "(a == b).all() against a constant": (
        """
        assert (g(x) == f(x)).all()
        """,
        "== of compiled, other",
        """
        assert (g(x) == 3).all()
        """,
    ),
    "assert_close of gradients": (
        """
        w = torch.ones(4, requires_grad=True)
        g(x * w).sum().backward()
        ref = torch.ones(4, requires_grad=True)
        (f(x * ref) * 2).sum().backward()
        torch.testing.assert_close(w.grad, ref.grad)
        """,
        "assert_close of compiled, other",
        """
        w = torch.ones(4, requires_grad=True)
        g(x * w).sum().backward()
        ref = torch.ones(4, requires_grad=True)
        (f(x * ref) * 2).sum().backward()
        torch.testing.assert_close(ref.grad / 2, ref.grad)
        """,
    ),
}


@contextlib.contextmanager
def following_kernels():
    """An evidence recorder of a script that defines kernels, installed for the block: its kernel writes, and it."""

    from oracles.kernel_writes import KernelWrites

    writes = KernelWrites()
    recorder = EvidenceRecorder(writes, folder=None, kernels_defined=True)
    recorder.install()
    try:
        yield writes, recorder
    finally:
        recorder.uninstall()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_check_shape_records_its_comparison_and_refuses_it_emptied(tmp_path, shape):
    check, evidence, emptied = SHAPES[shape]
    assert _recorded(tmp_path, check).evidence == evidence
    assert _recorded(tmp_path, emptied).evidence != evidence


def test_the_constant_reference_is_other_evidence(tmp_path):
    info = _recorded(tmp_path, "assert (g(x) == 3).all()\n")
    assert info.evidence == "== of compiled, number"


def test_the_reference_replaced_by_the_input_is_other_evidence(tmp_path):
    assert _recorded(tmp_path, "assert torch.allclose(g(x), f(x))\n").evidence == "allclose of compiled, other"
    assert _recorded(tmp_path, "assert torch.allclose(g(x), x)\n").evidence == "allclose of compiled, input"


def test_sequences_compared_item_by_item_come_from_what_their_items_come_from(tmp_path):
    # The stated gradient check: `assert_close(torch.autograd.grad(compiled(x).sum(), x), ...)` compares tuples.
    info = _recorded(tmp_path, "torch.testing.assert_close((g(x),), [f(x)])\n")
    assert info.evidence == "assert_close of compiled, other"
    assert _recorded(tmp_path, "torch.testing.assert_close((f(x),), [f(x) + 1])\n").evidence is None


def test_a_bare_comparison_in_a_helper_that_returns_nothing_is_trivial(tmp_path):
    # The comparison still runs and fails, but the assert fails on the helper's None.
    info = _recorded(tmp_path, "def check(a, b):\n    torch.allclose(a, b)\nassert check(g(x), f(x))\n")
    assert info.evidence is None


def test_a_literal_assert_after_a_failing_comparison_is_trivial(tmp_path):
    info = _recorded(tmp_path, "ok = torch.allclose(g(x), f(x))\nassert False, 'differs'\n")
    assert info.evidence is None


def test_a_crash_is_not_a_check(tmp_path):
    info = _recorded(tmp_path, "torch.allclose(g(x), f(x))\ng(x).view(3, 3)\n")
    assert info.type == "RuntimeError" and info.evidence is None


def test_the_script_signature_carries_the_evidence_and_the_report_says_what_was_compared(tmp_path):
    info = _recorded(tmp_path, "assert torch.allclose(g(x), f(x)), 'differs'\n")
    from oracles.api import RecordedRun

    verdict = script_oracle(RecordedRun(exception=info))
    assert verdict.fires and verdict.found.by_a_comparison
    assert "[evidence: allclose of compiled, other]" in verdict.signature
    assert info.evidence_detail == (
        "allclose: compares the output of the compiled call (float32 [4]) with the reference (float32 [4]): "
        "max abs difference 0.5"
    )


def test_a_requires_grad_read_of_the_compiled_output_is_evidence(tmp_path):
    info = _recorded(tmp_path, "w = torch.ones(4, requires_grad=True)\nassert not g(w).requires_grad\n")
    assert info.evidence == "requires_grad of compiled"


def test_traced_floats_stay_floats():
    value = TracedFloat(0.5, frozenset({"compiled"}))
    assert isinstance(value, float) and value == 0.5 and hash(value) == hash(0.5)
    assert isinstance(value * 2 + 1, TracedFloat) and (value * 2 + 1).origin == {"compiled"}
    assert type(__import__("pickle").loads(__import__("pickle").dumps(value))) is float


def test_the_recorder_leaves_nothing_behind():
    import math

    real_isclose, real_assert_close = math.isclose, torch.testing.assert_close
    recorder = EvidenceRecorder(writes=None, folder=None)
    recorder.install()
    recorder.uninstall()
    assert math.isclose is real_isclose and torch.testing.assert_close is real_assert_close
    from torch.overrides import _get_current_function_mode

    assert _get_current_function_mode() is None


def test_a_kernels_reference_is_told_by_the_operations_that_computed_it():
    pytest.importorskip("triton")

    with following_kernels() as (writes, recorder):
        positions = torch.arange(6)
        out = torch.empty_like(positions)
        writes.note_passed(positions)
        out.copy_(positions.clamp(max=4))
        writes.note(out, "bucket_kernel", launch="(max_bucket=4)")
        assert not bool((out == positions.abs().clamp(max=3)).all())
        assert not bool((out == positions.abs().clamp(max=1)).all())
        assert not bool((out == positions.abs()).all())
        assert not bool((out == positions).all())
    # What the reference's operations were told is part of it: clamp(max=1) is another reference than
    # clamp(max=3), which the kernel's fix would not mend; so is the launch's max_bucket.
    assert [c.signature for c in recorder.comparisons] == [
        "== of kernel bucket_kernel(max_bucket=4), abs+clamp(max=3)",
        "== of kernel bucket_kernel(max_bucket=4), abs+clamp(max=1)",
        "== of kernel bucket_kernel(max_bucket=4), abs",
        "== of kernel bucket_kernel(max_bucket=4), input",
    ]
    assert recorder.comparisons[0].kernels == ["bucket_kernel"]


def test_unittest_main_exits_named_by_the_failure_it_printed(tmp_path):
    # python's traceback shows the test's AssertionError, and unittest's summary after it; the harness sees the
    # exit: both must name the same failure.
    from minimizer.runner.plain import exception_from_stderr

    info = _recorded(tmp_path, SHAPES["unittest"][0])
    assert (info.type, info.message) == ("AssertionError", "False is not true")
    printed = (
        "F\n" + "=" * 70 + "\nFAIL: test_it (__main__.T.test_it)\n" + "-" * 70 + "\nTraceback (most recent call last):\n"
        '  File "check.py", line 14, in test_it\n    self.assertTrue(x)\nAssertionError: False is not true\n\n'
        + "-" * 70 + "\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n"
    )
    plain = exception_from_stderr(printed, tmp_path / "check.py")
    assert (plain.type, plain.message) == ("AssertionError", "False is not true")
    # Both read the test's assertion as the assert it spells: plain python's traceback names its line.
    script = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_it(self):\n        self.assertTrue(x)\n"
    (tmp_path / "check.py").write_text(script)
    printed = printed.replace("line 14", "line 6")
    assert exception_from_stderr(printed, tmp_path / "check.py").assert_text == "x"


def test_a_failed_test_is_read_as_the_assert_its_assertion_spells(tmp_path):
    # `self.assertTrue(torch.allclose(a, b))` checks what `assert torch.allclose(a, b)` does: both read alike, so a
    # test lifted out of its class (source/passes/structure/unittest_cases.py) is the same check.
    from oracles.signature import exception_signature

    in_a_test = _recorded(tmp_path, SHAPES["unittest"][0])
    plain = _recorded(tmp_path, "assert torch.allclose(g(x), f(x))\n")
    assert in_a_test.assert_text == plain.assert_text == "torch.allclose(g(x), f(x))"
    assert exception_signature(in_a_test, evidence=True) == exception_signature(plain, evidence=True)
    equal = SHAPES["unittest"][0].replace("self.assertTrue(torch.allclose(g(x), f(x)))", "self.assertEqual(g(x).sum().item(), 1.5)")
    assert _recorded(tmp_path, equal).assert_text == "g(x).sum().item() == 1.5"


def test_an_error_measured_against_a_reference_carries_the_reference():
    # `(ours - ref).abs().max() < tol` compares a number: what the kernel's output was measured against is part of
    # the check (a reference that lost its slope, or went, is another check).
    pytest.importorskip("triton")
    import torch.nn.functional as F


    with following_kernels() as (writes, recorder):
        x = -torch.ones(3)
        out = torch.empty_like(x)
        writes.note_passed(x)
        out.copy_(x)
        writes.note(out, "leaky_kernel", launch="(slope=0.1) of neg")  # as the launch tells `-torch.ones(3)`
        assert not (out - F.leaky_relu(x, 0.1)).abs().max().item() < 1e-5
        assert not (out - F.leaky_relu(x)).abs().max().item() < 1e-5
        assert not out.abs().max().item() < 0.5
    assert [c.signature for c in recorder.comparisons] == [
        "< of kernel leaky_kernel(slope=0.1) then abs+max+sub against leaky_relu(negative_slope=0.1), number",
        "< of kernel leaky_kernel(slope=0.1) then abs+max+sub against leaky_relu(negative_slope=0.01), number",
        "< of kernel leaky_kernel(slope=0.1) of neg then abs+max, number",
    ]


def test_a_kernels_output_broadcast_over_more_elements_is_another_comparison():
    # One column of the kernel's output added to two columns: the difference is the broadcast's, not the kernel's.
    pytest.importorskip("triton")

    with following_kernels() as (writes, recorder):
        x = torch.ones(1, 2)
        out = torch.empty(1, 1)
        writes.note(out, "scale_kernel")
        with recorder.aside():  # the kernel's store, which no torch operation makes
            out.fill_(0.5)
        assert not bool(((x + out) == torch.ones(1, 2) * 2).all())
        assert not bool(((x[:, :1] + out) == torch.ones(1, 1) * 2).all())
        assert not torch.allclose(out, torch.ones(1, 2) * 2)  # the comparison itself broadcasts the kernel's output
    assert [c.signature for c in recorder.comparisons] == [
        "== of kernel scale_kernel then add spread by broadcasting, mul(other=2)",
        "== of kernel scale_kernel then add, mul(other=2)",
        "allclose of kernel scale_kernel spread by broadcasting, mul(other=2)",
    ]


def test_an_error_measured_where_the_kernel_wrote_nothing_is_another_comparison():
    # Generated seed 401: the kernel wrote one element of `torch.ones(2)`, the reference was `[0.0]` broadcast:
    # the largest error was the unwritten element's, whatever the kernel's line computed.
    pytest.importorskip("triton")

    with following_kernels() as (writes, recorder):
        for written in (torch.tensor([True, True]), torch.tensor([True, False])):
            out = torch.ones(2)
            out[written] = 0.0
            writes.note(out, "shift_kernel", unchanged=~written)
            assert not (out - torch.full((1,), 0.5)).abs().max().item() < 1e-4
    assert [c.signature for c in recorder.comparisons] == [
        "< of kernel shift_kernel then abs+max+sub, number",
        "< of kernel shift_kernel then abs+max+sub, differing where it did not write, number",
    ]


def test_a_value_computed_from_a_kernels_output_is_not_that_output():
    # Generated seed 142: the reducer let the kernel write into its own input and the script then scale and shift
    # what it wrote a second time; the check failed, on a value the kernel's bug no longer decides.
    pytest.importorskip("triton")

    with following_kernels() as (writes, recorder):
        h, scale = torch.ones(2), torch.full((2,), 2.0)
        reference = h * scale + 1
        writes.note(h, "scale_shift_kernel")
        with recorder.aside():  # the kernel's store, which no torch operation makes
            h.fill_(0.5)
        assert not torch.allclose(h, reference)
        assert not torch.allclose(h * scale + 1, reference)
    assert [c.signature for c in recorder.comparisons] == [
        "allclose of kernel scale_shift_kernel, add(other=1)+mul",
        "allclose of kernel scale_shift_kernel then add(other=1)+mul, add(other=1)+mul",
    ]


def test_an_error_taken_as_a_number_names_what_the_kernels_output_went_through():
    # Generated seed 151: the error was `(out - ref).max().item()`, and a reduction let the script scale and shift
    # the kernel's output a second time before it; the number's origin must tell the two apart.
    pytest.importorskip("triton")

    def error_of(twice):
        with following_kernels() as (writes, recorder):
            h, scale = torch.ones(2), torch.full((2,), 2.0)
            reference = h * scale + 1
            writes.note(h, "scale_shift_kernel")
            with recorder.aside():  # the kernel's store, which no torch operation makes
                h.fill_(0.5)
            out = h * scale + 1 if twice else h
            assert not (out - reference).abs().max().item() < 1e-4
        return [c.signature for c in recorder.comparisons]

    assert error_of(twice=False) == ["< of kernel scale_shift_kernel then abs+max+sub against add(other=1)+mul, number"]
    assert error_of(twice=True) != error_of(twice=False)


KERNEL_ON = '''import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) + 1.0, mask=offs < n)


def shifted(x):
    out = torch.empty_like(x)
    shift_kernel[(1,)](x, out, x.numel(), BLOCK=4)
    return out


x = torch.arange(4.0)
torch.testing.assert_close(shifted({given}), x * 0.5 + 2)
'''


def _script_verdicts(tmp_path, *scripts):
    """The ``script`` oracle's verdict on each of ``scripts``, run as a candidate; each must fire."""

    pytest.importorskip("triton")
    from minimizer.runner.process import run_candidate
    from minimizer.runner.run_types import Limits, RunSettings

    settings = RunSettings("check.py", str(tmp_path), ("script",), Limits(timeout=120))
    verdicts = [run_candidate(script, settings).verdict("script") for script in scripts]
    assert all(verdict.fires for verdict in verdicts)
    return verdicts


def test_a_kernel_launched_on_other_inputs_than_the_script_gave_it_is_another_comparison(tmp_path):
    # Generated seed 205: the script launched its kernel on `x * scale` and computed the reference from
    # `x * scale`; a reduction dropped the scaling on the kernel's side only, and the comparison still failed
    # (other inputs, not the bug), with the same reference operations. The kernel's origin tells what computed
    # the tensors its launch was given.
    scaled, bare = _script_verdicts(tmp_path, *(KERNEL_ON.format(given=g) for g in ("x * 0.5", "x")))
    # The scaling both sides went through is left out of both; dropped on the kernel's side only, it is the
    # reference's alone.
    assert scaled.signature.endswith("[evidence: assert_close of kernel shift_kernel, add(other=2)]")
    assert bare.signature.endswith("[evidence: assert_close of kernel shift_kernel, add(other=2)+mul(other=0.5)]")


def test_what_computed_a_buffer_the_kernel_only_writes_into_is_no_input_of_it(tmp_path):
    # Generated seed 301: the kernel wrote its output into `torch.ones(2) * 0.5`, a buffer it never read; the
    # `mul` that made the buffer named the kernel's inputs, so dropping it changed the comparison.
    (verdict,) = _script_verdicts(tmp_path, KERNEL_ON.replace("out = torch.empty_like(x)", "out = x * 3.0").format(given="x"))
    assert verdict.signature.endswith("[evidence: assert_close of kernel shift_kernel, add(other=2)+mul(other=0.5)]")


def test_a_number_read_from_a_kernels_reference_is_told_by_the_operations_that_computed_it():
    # Generated seed 204: `math.isclose(out.exp().sum().item(), ref.exp().sum().item())`, and a reduction
    # replaced the reference by the input (`x.exp().sum().item()`): a number from no suspect was `other` either way.
    pytest.importorskip("triton")

    def compared(reference_of):
        return _isclose_of_sums(reference_of, elements=2, read=lambda t: t.exp().sum().item())

    scaled = compared(lambda x: x * 2.0 + 1.0)
    assert scaled == ["math.isclose of kernel scale_shift_kernel then exp+sum, add(other=1)+exp+mul(other=2)+sum"]
    assert compared(lambda x: x) == ["math.isclose of kernel scale_shift_kernel then exp+sum, exp+sum"]


def test_a_reference_computed_over_more_elements_than_its_operand_is_another_reference():
    # Generated seed 204 again: `h * scale + shift` with `h` shrunk to one element and `shift` left at two: the
    # reference (two numbers) against the kernel's output (one), summed, differs whatever the kernel computes.
    pytest.importorskip("triton")

    def compared(shift):
        with following_kernels() as (writes, recorder):
            h = torch.ones(1).exp()
            out = torch.empty(1)
            writes.note(out, "scale_shift_kernel")
            with recorder.aside():  # the kernel's store, which no torch operation makes
                out.fill_(0.5)
            assert not bool(out.sum() == (h * 2.0 + shift).sum())
        return [c.signature for c in recorder.comparisons]

    assert compared(torch.ones(1)) == ["== of kernel scale_shift_kernel then sum, add+exp+mul(other=2)+sum"]
    assert compared(torch.ones(2)) == [  # each sum's extent tells it too (the number read from one element, not two)
        "== of kernel scale_shift_kernel then sum spread by broadcasting, add+exp+mul(other=2)+spread+sum"
    ]


def test_a_reference_drawn_from_other_random_numbers_than_the_kernels_inputs_is_another_comparison():
    # check_lambda_all_kernel on CUDA: the script reseeded before each path; a reduction deleted the reseeding,
    # and the kernel's output was compared with a reference computed from other random numbers.
    pytest.importorskip("triton")

    def compared(reseed):
        with following_kernels() as (writes, recorder):
            torch.manual_seed(0)
            x, out = torch.randn(4), torch.empty(4)
            writes.note(out, "scale_kernel", draws=draws_of([x]))
            with recorder.aside():  # the kernel's store, which no torch operation makes
                out.fill_(0.5)
            if reseed:
                torch.manual_seed(0)
            assert not bool(torch.allclose(out, torch.randn(4) * 2))
        return [c.signature for c in recorder.comparisons]

    assert compared(reseed=True) == ["allclose of kernel scale_kernel, mul(other=2)"]
    assert compared(reseed=False) == ["allclose of kernel scale_kernel, mul(other=2) from other data"]


def test_an_operation_both_the_launch_and_its_reference_went_through_is_left_out_of_both():
    # Generated seed 210: the kernel was launched on `proj(x)` and its reference was `proj(x) * scale + shift`;
    # the linear layer is part of neither's difference, and a repro may drop it from both sides, not from one.
    pytest.importorskip("triton")

    def compared(kernel_on_linear, reference_on_linear):
        with following_kernels() as (writes, recorder):
            layer, x, scale = torch.nn.Linear(2, 2), torch.ones(2), torch.full((2,), 2.0)
            h = layer(x) if kernel_on_linear else x
            out = torch.zeros(2)
            writes.note(out, "scale_kernel", launch=f" of {recorder_named(layer, x)}" if kernel_on_linear else "")
            reference = (layer(x) if reference_on_linear else x) * scale
            assert not torch.allclose(out, reference)
            del h
        return [c.signature for c in recorder.comparisons]

    assert compared(True, True) == compared(False, False) == ["allclose of kernel scale_kernel, mul"]
    assert compared(False, True) == ["allclose of kernel scale_kernel, linear+mul"]
    assert compared(True, False) == ["allclose of kernel scale_kernel of linear, mul"]


def test_an_origin_is_told_relative_to_the_launch():
    from oracles.comparison import launched_operations, measured_operations, without_common

    origin = frozenset({"kernel k(block=4) of linear+relu", "then sub", "against add", "against linear"})
    launched, measured = launched_operations(origin), measured_operations(origin)
    assert (launched, measured) == ({"linear", "relu"}, {"add", "linear"})
    assert without_common(origin, launched, measured) == {"kernel k(block=4) of relu", "then sub", "against add"}


def test_a_reference_summed_over_more_elements_than_the_kernels_output_is_another_reference():
    # Never-seen seed 244: `math.isclose(out.exp().sum(), ref.exp().sum())`, and a reduction shrank the kernel's
    # input to one element while `scale` kept two: the reference, `h * scale + shift`, summed two numbers.
    pytest.importorskip("triton")

    def compared(scale):
        return _isclose_of_sums(lambda h: h * scale + 1.0, elements=1, read=lambda t: t.exp().sum())

    assert compared(torch.full((1,), 2.0)) == ["math.isclose of kernel scale_shift_kernel then exp+sum, add(other=1)+exp+mul+sum"]
    assert compared(torch.full((2,), 2.0)) == [
        "math.isclose of kernel scale_shift_kernel then exp+sum spread by broadcasting, add(other=1)+exp+mul+sum"
    ]


def test_a_reference_read_with_numpy_is_told_by_the_operations_that_computed_it():
    # Never-seen seed 226: `np.testing.assert_allclose(out.numpy(), ref.numpy())`, and a reduction replaced the
    # reference by the input: an array from no suspect was `other` either way.
    pytest.importorskip("triton")
    numpy = pytest.importorskip("numpy")

    def compared(reference_of):
        with following_kernels() as (writes, recorder):
            x, out = torch.ones(2), torch.zeros(2)
            writes.note(out, "scale_kernel")
            with pytest.raises(AssertionError):
                numpy.testing.assert_allclose(out.numpy(), reference_of(x).detach().numpy())
        return [c.signature for c in recorder.comparisons]

    assert compared(lambda x: x * 2.0) == ["np.testing.assert_allclose of kernel scale_kernel, mul(other=2)"]
    assert compared(lambda x: x) == ["np.testing.assert_allclose of kernel scale_kernel, other"]


def test_a_comparison_of_two_shapes_is_another_comparison():
    # triton_rms_norm_mask on the GPU machine's CPUs: the reduction flattened the reference's input, not the
    # kernel's, and `assert_close` compared [1, 3] with [3]: it fails on the shapes whatever the kernel computes.
    pytest.importorskip("triton")

    def compared(reference):
        with following_kernels() as (writes, recorder):
            out = torch.zeros(1, 3)
            writes.note(out, "rms_norm_kernel")
            with pytest.raises(AssertionError):
                torch.testing.assert_close(out, reference)
        return [c.signature for c in recorder.comparisons]

    assert compared(torch.ones(1, 3)) == ["assert_close of kernel rms_norm_kernel, other"]
    assert compared(torch.ones(3)) == ["assert_close (unlike shapes) of kernel rms_norm_kernel, other"]


def test_a_reference_computed_from_the_tensor_the_kernel_was_given_needs_no_account_of_how_it_was_made():
    # triton_row_softmax: the kernel gets `logits` (a linear layer's) and the reference is `softmax(logits)`, the
    # same tensor: whatever computed it, both sides see it, and the layer may go. A reference computed from other
    # tensors without the layer is another comparison (generated seed 205).
    pytest.importorskip("triton")

    def compared(logits_of, reference_from):
        with following_kernels() as (writes, recorder):
            x, weight = torch.ones(1, 2), torch.ones(2)
            logits, out = logits_of(x), torch.zeros(1, 2)
            writes.note_passed(logits)
            writes.note_passed(weight)
            writes.note(out, "row_softmax_kernel", launch=f" of {recorder_named(logits_of, x)}" if logits_of is not torch.clone else "")
            reference = torch.softmax({"the same tensor": logits, "the input": x.exp()}[reference_from], -1) * weight
            with pytest.raises(AssertionError):
                torch.testing.assert_close(out, reference)
        return [c.signature for c in recorder.comparisons]

    layer = torch.nn.Linear(2, 2)
    assert compared(layer, "the same tensor") == compared(torch.clone, "the same tensor") == [
        "assert_close of kernel row_softmax_kernel, mul+softmax"
    ]
    # Seed 205 after the first version of this rule: a reference that reads another of the launch's tensors (the
    # weight) but not `logits` still has to account for the layer.
    assert compared(layer, "the input") == ["assert_close of kernel row_softmax_kernel of linear, exp+mul+softmax"]


def _isclose_of_sums(reference_of, *, elements, read):
    """The comparisons of ``math.isclose(read(out), read(reference_of(x)))``: ``out`` a kernel's output of
    ``elements`` halves, ``x`` as many ones."""

    import math

    with following_kernels() as (writes, recorder):
        x, out = torch.ones(elements), torch.empty(elements)
        writes.note(out, "scale_shift_kernel")
        with recorder.aside():  # the kernel's store, which no torch operation makes
            out.fill_(0.5)
        assert not math.isclose(read(out), read(reference_of(x)))
    return [c.signature for c in recorder.comparisons]


# A kernel that reads one element of `shift` for both lanes (`offs // 2`) and writes `out`.
SHIFT_KERNEL = '''import os
os.environ["TRITON_INTERPRET"] = "1"
import math
import torch
import triton
import triton.language as tl


@triton.jit
def shift_kernel(shift_ptr, out_ptr):
    offs = tl.arange(0, 2)
    tl.store(out_ptr + offs, tl.load(shift_ptr + offs // 2))


'''
READS_SHIFT = SHIFT_KERNEL + '''torch.manual_seed(0)
x, shift = torch.randn(2), torch.randn(2)
out = x * 1
shift_kernel[(1,)](shift, out)
assert math.isclose(out.exp().sum(), {reference}.exp().sum(), rel_tol=1e-4)
'''


def test_what_filled_a_buffer_the_kernel_only_writes_into_is_no_data_it_was_given(tmp_path):
    # Never-seen seed 446: the kernel wrote into `out = x * 1` and read only `shift`; a reduction replaced the
    # reference `shift` by `x`, which shares nothing with what the kernel read, and the check still failed.
    shift, x = _script_verdicts(tmp_path, *(READS_SHIFT.format(reference=r) for r in ("shift", "x")))
    assert shift.signature.endswith("[evidence: math.isclose of kernel shift_kernel then exp+sum, exp+sum]")
    assert x.signature.endswith("[evidence: math.isclose of kernel shift_kernel then exp+sum, exp+sum from other data]")


INLINED = SHIFT_KERNEL + '''shift = torch.arange(2.0)
{launch}
assert ({compared} - shift).abs().max() < 1e-4
'''


def test_a_kernels_output_inlined_from_its_helper_is_the_same_comparison(tmp_path):
    # Generated seed 643: `assert (shifted(x) - shift).abs().max() < tol` names the error by the run's reading
    # (the helper's return is out of the text's reach), its inlined twin `assert (h - shift)...` by the text's:
    # two spellings of one comparison refused the inlining. The run's reading names both alike.
    helper = "def shifted(h):\n    shift_kernel[1,](shift, h)\n    return h\n"
    inlined = "h = torch.ones(2)\nshift_kernel[1,](shift, h)\n"
    called, spelled = _script_verdicts(
        tmp_path, INLINED.format(launch=helper, compared="shifted(torch.ones(2))"), INLINED.format(launch=inlined, compared="h")
    )
    assert called.signature.split(" [kernels:")[1] == spelled.signature.split(" [kernels:")[1]
    assert "[compared: kernel shift_kernel then abs+max+sub against input, number]" in spelled.signature


MEASURED = SHIFT_KERNEL + '''shift = torch.arange(2.0)
out = torch.ones(2)
shift_kernel[1,](shift, out)
assert ({measured} - {against}).abs().max() < 1e-4
'''


def test_a_kernels_output_measured_against_more_of_itself_is_held_to_no_difference(tmp_path):
    # check_max_error_loop_kernel, under a wider flags pass: the kernel came to compute the identity, writing the
    # batch in place, and the check compared `linear(batch)` with `leaky_relu(batch)`, two functions of the
    # kernel's output. Held to the difference alone, that passed for the kernel checked against its reference.
    pytest.importorskip("triton")
    from minimizer.runner.process import run_candidate
    from minimizer.runner.run_types import Limits, RunSettings
    from oracles.script import SAME_DIFFERENCE

    settings = RunSettings("check.py", str(tmp_path), (SAME_DIFFERENCE,), Limits(timeout=120))
    reference, itself = (
        run_candidate(MEASURED.format(measured="out * 3", against=a), settings).verdict(SAME_DIFFERENCE)
        for a in ("shift * 3", "(out + 1)")
    )
    assert reference.fires and itself.fires
    assert "against nothing" not in reference.signature
    assert itself.signature.endswith("against nothing but its own output]")


PART_WRITTEN = '''import os
os.environ["TRITON_INTERPRET"] = "1"
import sys
import torch
import triton
import triton.language as tl


@triton.jit
def scale_kernel(gamma_ptr, out_ptr):
    cols = tl.arange(0, {columns})
    tl.store(out_ptr + cols, tl.load(gamma_ptr + cols * 0))


gamma, x = torch.arange(2.0) + 1, torch.ones(2)
out = x * 1
scale_kernel[1,](gamma, out)
if (x + out - (x + gamma)).abs().max() > 0.0:
    sys.exit(1)
'''


def test_a_kernel_that_writes_part_of_its_output_is_another_comparison(tmp_path):
    # check_sys_exit_kernel: the kernel, which reads gamma's first element for every column, was shrunk to one
    # column of two; the check then failed on the element it left as `x * 1` held it, and the fix mended nothing.
    whole, part = _script_verdicts(tmp_path, *(PART_WRITTEN.format(columns=c) for c in (2, 1)))
    assert "[evidence: > of kernel scale_kernel then abs+add+max+sub against add, number]" in whole.signature
    assert "[evidence: > of kernel scale_kernel writing part of its output then abs+add+max+sub" in part.signature


def test_a_kernels_output_measured_through_a_layer_the_reference_never_saw_is_another_comparison():
    # check_max_error_loop_kernel with the fused and reference paths of `tabular_net(x, fused=...)` apart: a step
    # dropped fc2 from the reference's side only and put a fresh `nn.Linear(1, 1)` on the kernel's; the
    # operations read alike (`then linear`), the weights do not.
    pytest.importorskip("triton")

    def compared(kernel_side_layer):
        with following_kernels() as (writes, recorder):
            torch.manual_seed(0)
            fc1, fc2, h_out = torch.nn.Linear(2, 1), torch.nn.Linear(1, 1), torch.empty(1)
            h = fc1(torch.ones(2))
            writes.note(h_out, "leaky_relu_kernel", draws=draws_of([h]))
            with recorder.aside():  # the kernel's store, which no torch operation makes
                h_out.fill_(0.5)
            layer = {"fc2": fc2, "fresh": torch.nn.Linear(1, 1), "none": None}[kernel_side_layer]
            fused = layer(h_out) if layer is not None else h_out
            reference = fc2(torch.nn.functional.leaky_relu(h, 0.1))
            assert not bool(torch.allclose(fused, reference))
        return [c.signature for c in recorder.comparisons][0]

    assert "through other data" not in compared("fc2")  # the same layer on both sides
    assert "then linear" in compared("fresh") and "through other data" in compared("fresh")
    assert "through other data" not in compared("none")


def test_a_difference_measured_through_a_layer_of_the_kernels_side_only_is_another_comparison():
    # check_max_error_loop_kernel on the device with the flags pass: `(nn.Linear(1, 1)(out) - leaky_relu(x)).abs()
    # .max() < tol`, a fresh layer on the kernel's side where the reference has none; `then linear` alone reads
    # like fc2 on both sides, which the script had.
    pytest.importorskip("triton")

    def compared(kernel_side_layer):
        with following_kernels() as (writes, recorder):
            torch.manual_seed(0)
            fc2, x, out = torch.nn.Linear(1, 1), torch.ones(1), torch.empty(1)
            writes.note(out, "leaky_relu_kernel", draws=draws_of([x]))
            with recorder.aside():
                out.fill_(0.5)
            layer = fc2 if kernel_side_layer == "fc2" else torch.nn.Linear(1, 1)
            reference = fc2(torch.nn.functional.leaky_relu(x, 0.1)) if kernel_side_layer == "fc2" else x.relu()
            assert not bool((layer(out) - reference).abs().max() < 1e-5)
        return [c.signature for c in recorder.comparisons][0]

    assert "through other data" not in compared("fc2")
    assert "through other data" in compared("fresh")


def test_a_layer_applied_alike_to_the_kernels_output_and_its_reference_is_left_out_of_both():
    # check_max_error_loop_kernel: `(fc2(out) - fc2(leaky_relu(fc1(x)))).abs().max() < tol`, the kernel launched on
    # fc1(x). fc2 on both sides is no part of the check; dropped from one side only, it compares something else,
    # though fc1 (also a `linear`) is on both too.
    pytest.importorskip("triton")

    def compared(kernel_side, reference_side, check="max"):
        with following_kernels() as (writes, recorder):
            torch.manual_seed(0)
            fc1, fc2 = torch.nn.Linear(2, 1), torch.nn.Linear(1, 1)
            out = fc1(torch.ones(2))  # the kernel writes into its input, as the script's did
            writes.note(out, "leaky_relu_kernel", launch=f" of {recorder_named(fc1, torch.ones(2))}")
            with recorder.aside():
                out.fill_(0.5)
            ours = fc2(out) if kernel_side else out
            reference = torch.nn.functional.leaky_relu(fc1(torch.ones(2)), 0.1)
            reference = fc2(reference) if reference_side else reference
            if check == "max":
                assert not bool((ours - reference).abs().max() < 1e-5)
            else:
                assert not torch.allclose(ours, reference)
        return [c.signature for c in recorder.comparisons][0]

    for check in ("max", "allclose"):
        both, neither = compared(True, True, check), compared(False, False, check)
        assert both == neither and "linear" not in both
        assert compared(True, False, check) != both and compared(False, True, check) != both


def recorder_named(layer, x):
    """How the recorder names `layer(x)` (with its parameters' identities), as a launch's inputs tell it."""

    from oracles.settings import named_operation

    return named_operation("linear", torch.nn.functional.linear, (x, layer.weight, layer.bias), {})


def test_a_kernel_fed_by_another_kernels_output_was_computed_by_what_fed_that_one():
    # check_helper_allclose_kernel with two blocks: the second block's kernel reads `linear2(out1)`, out1 the first
    # kernel's output from `linear1(x)`; the reference went through both layers, and so did the second kernel.
    pytest.importorskip("triton")
    from oracles.evidence import operations_of

    with following_kernels() as (writes, recorder):
        linear1, linear2, x = torch.nn.Linear(2, 2), torch.nn.Linear(2, 2), torch.ones(2)
        out1 = torch.empty(2)
        writes.note(out1, "block_kernel", launch=f" of {recorder_named(linear1, x)}")
        h2 = linear2(out1)
        found = operations_of([h2])
    assert found == {recorder_named(linear1, x), recorder_named(linear2, out1)}
