"""Whether the failing comparison decides the script's failure (oracles.deciding): the script runs again with
its comparisons of the suspect's values held, and a failure that comes back the same is not the comparison's.

As in test_evidence, the harness's ``torch.compile`` returns a callable that adds 0.5: ``g(x)`` is the suspect's
wrong output, ``f(x)`` its reference."""

from __future__ import annotations

import pytest

from minimizer.runner.child import run_script
from oracles.deciding import fails_anyway, needs_a_held_run
from tests.oracles.wrong_compile import failing_run

def _decided(tmp_path, body: str) -> str:
    """``"decides"``, ``"fails anyway"``, or ``"not asked"`` (no held run needed)."""

    with failing_run(tmp_path, body) as (harness, escaped, path):
        if not needs_a_held_run(harness.evidence, escaped):
            return "not asked"
        harness.clear()
        return "fails anyway" if fails_anyway(harness.evidence, escaped, lambda: run_script(path, 0)) else "decides"


# (the check as a script writes it, the check emptied as a reduction would leave it)
LINKED_AND_EMPTIED = {
    "caught assert_close in a helper, then SystemExit": (
        """
        def agrees(a, b):
            try:
                torch.testing.assert_close(a, b)
            except AssertionError:
                return False
            return True
        failures = [s for s in range(2) if not agrees(g(x), f(x))]
        if failures:
            raise SystemExit(f"disagrees on {failures}")
        """,
        """
        def agrees(a, b):
            try:
                torch.testing.assert_close(a, b)
            except AssertionError:
                pass
        failures = [s for s in range(2) if not agrees(g(x), f(x))]
        if failures:
            raise SystemExit(f"disagrees on {failures}")
        """,
    ),
    "helper returning allclose": (
        """
        def matches(a, b):
            return torch.allclose(a, b)
        assert matches(g(x), f(x)), "differs"
        """,
        """
        def matches(a, b):
            torch.allclose(a, b)
            return False
        assert matches(g(x), f(x)), "differs"
        """,
    ),
    "flag set by a loop, then sys.exit": (
        """
        ok = True
        for batch in [x, x + 1]:
            ok = ok and bool((g(batch) == f(batch)).all())
        if not ok:
            sys.exit(1)
        """,
        """
        ok = True
        for batch in [x, x + 1]:
            seen = bool((g(batch) == f(batch)).all())
            ok = False
        if not ok:
            sys.exit(1)
        """,
    ),
    "math.isclose collected in a dict": (
        """
        results = {"sum": math.isclose(g(x).sum().item(), f(x).sum().item())}
        assert all(results.values()), results
        """,
        """
        results = {"sum": math.isclose(g(x).sum().item(), f(x).sum().item()) and False}
        assert all(results.values()), results
        """,
    ),
    "traced numbers compared with ==": (
        """
        if g(x).sum().item() == f(x).sum().item():
            pass
        else:
            raise RuntimeError("sums differ")
        """,
        """
        g(x).sum().item() == f(x).sum().item()
        raise RuntimeError("sums differ")
        """,
    ),
}


@pytest.mark.parametrize("shape", sorted(LINKED_AND_EMPTIED))
def test_a_comparison_decides_its_check_and_not_the_emptied_one(tmp_path, shape):
    linked, emptied = LINKED_AND_EMPTIED[shape]
    assert _decided(tmp_path, linked) == "decides"
    assert _decided(tmp_path, emptied) == "fails anyway"


def test_the_failure_a_library_check_raised_needs_no_second_run(tmp_path):
    assert _decided(tmp_path, "torch.testing.assert_close(g(x), f(x))\n") == "not asked"
    body = """
    try:
        torch.testing.assert_close(g(x), f(x))
    except AssertionError as failed:
        raise RuntimeError("parity") from failed
    """
    assert _decided(tmp_path, body) == "not asked"


def test_a_comparison_whose_sense_cannot_be_told_is_taken_as_it_is(tmp_path):
    # `<` on an error holds when true here, and would hold when false in `if err > tol: raise`.
    assert _decided(tmp_path, "assert (g(x) - f(x)).abs().max().item() < 1e-5\n") == "not asked"


CAUGHT_IN_A_HELPER = '''import os
os.environ["TRITON_INTERPRET"] = "1"
import torch
import triton
import triton.language as tl


@triton.jit
def shift_kernel(x_ptr, out_ptr):
    offs = tl.arange(0, 4)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs) + 2.0)


def agrees():
    x = torch.arange(4.0)
    out = torch.empty_like(x)
    shift_kernel[(1,)](x, out)
    try:
        torch.testing.assert_close(out, x + 1)
    except AssertionError:
        {handled}


failures = [seed for seed in range(2) if not agrees()]
if failures:
    raise SystemExit(f"the kernel disagrees on seeds {{failures}}")
'''


def test_a_kernels_check_caught_in_a_helper_is_evidence_only_while_the_helper_says_so(tmp_path):
    # A program written after the code (bench/results/2026-11-29-new-program-bias-rows): the helper lost its
    # `return False`, returned None, and the script exited whatever the kernel computed; the repro was stated.
    pytest.importorskip("triton")
    from minimizer.runner.process import run_candidate
    from minimizer.runner.run_types import Limits, RunSettings

    settings = RunSettings("check.py", str(tmp_path), ("script",), Limits(timeout=120))
    linked, emptied = (
        run_candidate(CAUGHT_IN_A_HELPER.format(handled=h), settings).verdict("script")
        for h in ("return False\n    return True", "pass")
    )
    assert linked.fires and linked.found.by_a_comparison
    assert emptied.fires and not emptied.found.by_a_comparison


def test_a_script_its_held_comparisons_let_run_on_is_stopped_and_its_comparison_stands():
    runs = []

    def run_again():
        runs.append(1)
        import time

        time.sleep(5)
        return SystemExit("never reached")

    class Recorder:
        holding = False

    assert not fails_anyway(Recorder(), SystemExit("never reached"), run_again, seconds=0.2)
    assert runs == [1]
