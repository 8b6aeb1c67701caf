"""The exit-code interestingness test, run as an external reducer runs it: a subprocess per candidate."""

import subprocess
import sys

import pytest

from tests.bugs import ALSO, ONLY, check_failed

HELPER = 'def boom(n):\n    raise ValueError(f"boom {n}")\n'
BUG = "import torch\nfrom helper import boom\nboom(torch.ones(3).sum().item())\n"


@pytest.fixture
def origin(tmp_path):
    # The helper lives only in the origin folder: the candidate must still import it from wherever it is read.
    folder = tmp_path / "origin"
    folder.mkdir()
    (folder / "helper.py").write_text(HELPER)
    return folder


def interestingness(origin, signature, candidate, *, count_file, stdin=None):
    command = [sys.executable, "-m", "minimizer.interestingness", "--oracle", "script", "--signature", signature]
    command += ["--origin-dir", str(origin), "--count-file", str(count_file), str(candidate)]
    return subprocess.run(command, input=stdin, capture_output=True, text=True, timeout=60)


def test_exit_0_for_the_signature_and_1_for_another(tmp_path, origin):
    candidate = tmp_path / "candidate.py"
    candidate.write_text(BUG)
    count_file = tmp_path / "calls"

    right = interestingness(origin, "ValueError: boom N", candidate, count_file=count_file)
    wrong = interestingness(origin, "KeyError: boom N", "-", count_file=count_file, stdin=BUG)

    assert right.returncode == 0, right.stderr
    assert wrong.returncode == 1, wrong.stderr
    assert len(count_file.read_text().splitlines()) == 2


def test_a_repro_that_states_the_inplace_bug_counts_by_its_own_assert():
    from minimizer.interestingness import shows_bug
    from minimizer.runner.run_types import RunResult
    from minimizer.source.statement import stated_message
    from oracles.api import Verdict

    def result(inplace: Verdict, script: Verdict) -> RunResult:
        return RunResult(seconds=0.0, verdicts={"inplace": inplace, "script": script})

    quiet = Verdict(False)
    stated_assert = Verdict(True, bug=check_failed(f"AssertionError: {stated_message('inplace')}", comparison="equal of kernel k, other"))
    harness_saw_it = Verdict(True, "inplace: TanhBackward0")
    # The stated hooks take over the harness's: only the assert fires, and that is the bug.
    assert shows_bug(result(quiet, stated_assert), "inplace", "inplace: TanhBackward0", stated=True)
    assert not shows_bug(result(quiet, stated_assert), "inplace", "inplace: TanhBackward0", stated=False)
    other = Verdict(True, bug=check_failed("AssertionError: other"))
    assert not shows_bug(result(quiet, other), "inplace", "inplace: TanhBackward0", stated=True)
    # The saved-tensor check compares inside backward, which the evidence does not follow: its assert is enough.
    hooks_assert = Verdict(True, bug=check_failed(f"AssertionError: {stated_message('inplace')}"))
    assert shows_bug(result(quiet, hooks_assert), "inplace", "inplace: TanhBackward0", stated=True)
    # A stated repro must fail on its own.
    assert not shows_bug(result(harness_saw_it, quiet), "inplace", "inplace: TanhBackward0", stated=True)
    assert shows_bug(result(harness_saw_it, quiet), "inplace", "inplace: TanhBackward0", stated=False)
    # The gradient statement leaves the harness's hooks on; where it raises on its own, it shows nothing.
    unused = Verdict(True, "RuntimeError: One of the differentiated Tensors appears to not have been used in the graph")
    assert not shows_bug(result(harness_saw_it, unused), "inplace", "inplace: TanhBackward0", stated=True)
    assert shows_bug(result(harness_saw_it, stated_assert), "inplace", "inplace: TanhBackward0", stated=True)


def test_a_stated_comparison_counts_only_where_its_assert_fails():
    from minimizer.interestingness import shows_bug
    from minimizer.runner.run_types import RunResult
    from oracles.api import Verdict

    def result(script: Verdict) -> RunResult:
        return RunResult(seconds=0.0, verdicts={"gradient": Verdict(True, "gradient: input float32 value"), "script": script})

    compared_bug = check_failed("AssertionError: Tensor-likes are not close!", comparison="assert_close of compiled, other")
    compared = Verdict(True, bug=compared_bug)
    raised = Verdict(True, "RuntimeError: element N of tensors does not require grad and does not have a grad_fn")
    assert shows_bug(result(compared), "gradient", "gradient: input float32 value", stated=True)
    # An assert that fails comparing values that no longer come from the compiled call shows nothing.
    unrelated = Verdict(True, bug=check_failed("AssertionError: Tensor-likes are not close!"))
    assert not shows_bug(result(unrelated), "gradient", "gradient: input float32 value", stated=True)
    # autograd.grad of a leaf that needs no gradient raises on its own: the statement showed nothing.
    assert not shows_bug(result(raised), "gradient", "gradient: input float32 value", stated=True)
    # Seed 580: eager's gradient is NaN too, and `allclose` fails on NaN whatever compiled: with the identity as well.
    with_identity = Verdict(True, bug=compared_bug.with_(under_compile=ALSO))
    assert not shows_bug(result(with_identity), "gradient", "gradient: input float32 value", stated=True)
    only_compiled = Verdict(True, bug=compared_bug.with_(under_compile=ONLY))
    assert shows_bug(result(only_compiled), "gradient", "gradient: input float32 value", stated=True)
