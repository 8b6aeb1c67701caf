"""The repro as a regression test (``minimizer.regression_test``, ``minimizer.regression_check``)."""

from __future__ import annotations

import ast

from typer.testing import CliRunner

from minimizer.cli import app
from minimizer.regression_check import check_regression_test
from minimizer.regression_test import regression_test
from minimizer.runner.run_types import Limits

REPRO = '''# Minimized by minimizer 0.1.0 from train.py
# fails: the compiled call's output differs from eager's

import torch
import triton
import triton.language as tl

BLOCK = 4


@triton.jit
def kernel(x_ptr):
    tl.store(x_ptr + tl.arange(0, BLOCK), 1.0)


scale = 2.0


def f(x):
    return x * scale


if __name__ == "__main__":
    x = torch.ones(4, device="cuda")
    torch.testing.assert_close(torch.compile(f)(x), f(x))
'''


def _top_level(text: str) -> list[str]:
    return [type(node).__name__ + ":" + getattr(node, "name", "") for node in ast.parse(text).body]


def test_the_steps_become_a_test_case_method_and_what_triton_reads_stays_at_module_level():
    test = regression_test(REPRO, name="scale")
    assert test.startswith("# Minimized by minimizer 0.1.0 from train.py\n")  # the header stays on top
    assert _top_level(test) == [
        "Import:", "Import:", "Import:", "Import:", "ImportFrom:", "Assign:", "FunctionDef:kernel", "ClassDef:TestRepro", "If:",
    ]
    method = next(node for node in ast.parse(test).body if isinstance(node, ast.ClassDef)).body[0]
    assert method.name == "test_scale" and [type(s).__name__ for s in method.body] == ["Assign", "FunctionDef", "Assign", "Expr"]
    assert '@unittest.skipIf(not torch.cuda.is_available(), "the bug needs CUDA")' in test  # the repro needs CUDA
    assert "from torch.testing._internal.common_utils import TestCase, run_tests" in test
    assert test.rstrip().endswith("run_tests()")


KERNEL_ON_THE_INTERPRETER = '''import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr):
    x = tl.load(x_ptr)
    tl.store(x_ptr, x + 1)


x = torch.ones(1)
k[1,](x)
assert x.item() == 1
'''


def test_what_comes_before_the_last_import_stays_and_a_kernels_own_locals_pull_nothing_up():
    test = regression_test(KERNEL_ON_THE_INTERPRETER)
    assert test.index('os.environ.setdefault("TRITON_INTERPRET", "1")') < test.index("import triton")
    method = next(node for node in ast.parse(test).body if isinstance(node, ast.ClassDef)).body[0]
    assert [ast.unparse(s) for s in method.body] == ["x = torch.ones(1)", "k[1,](x)", "assert x.item() == 1"]


def test_the_pytest_function_runs_under_plain_python_too():
    test = regression_test(REPRO.replace('device="cuda"', ""), style="pytest", name="my repro")
    assert "def test_my_repro():" in test and "pytest" not in test  # no CUDA: no skip, no import of pytest
    assert test.rstrip().endswith('if __name__ == "__main__":\n    test_my_repro()')
    compile(test, "test.py", "exec")


FAILS_BY_ITS_BACKEND = '''import torch


def off_by_one(gm, example_inputs):
    return lambda *args: [out + 1 for out in gm(*args)]


def f(x):
    return (x * 2,)


x = torch.ones(3)
torch.testing.assert_close(torch.compile(f, backend=off_by_one)(x), f(x))
'''


def test_the_written_test_fails_today_under_python_and_pytest_and_passes_with_the_identity(tmp_path):
    repro = tmp_path / "bug.py"
    repro.write_text(FAILS_BY_ITS_BACKEND)
    result = CliRunner().invoke(app, ["test", str(repro), "--style", "pytest"])
    assert result.exit_code == 0, result.output
    assert "fails under plain python as the repro does, and under pytest, passes with torch.compile as the identity" in " ".join(result.output.split())
    assert (tmp_path / "test_bug.py").read_text().count("def test_bug():") == 1


def test_a_test_that_cannot_fail_is_told_and_exits_nonzero(tmp_path):
    repro = tmp_path / "fine.py"
    repro.write_text("import torch\nassert torch.compile(lambda x: x + 1)(torch.ones(1)).item() == 2\n")
    result = CliRunner().invoke(app, ["test", str(repro), "--style", "pytest", "-o", str(tmp_path / "test_fine.py")])
    assert result.exit_code == 1
    assert "the repro itself passes under plain python" in " ".join(result.output.split())


def test_a_failure_the_reduction_saw_is_not_run_again(tmp_path):
    # The repro given would pass: had it been run again, the check would say so.
    checked = check_regression_test(
        "raise AssertionError('differs')\n", "test_seen.py", "pass\n", tmp_path, Limits(timeout=60.0),
        with_pytest=False, repro_failure="AssertionError: differs",
    )
    assert checked.problems == []
    unseen = check_regression_test("raise AssertionError('differs')\n", "test_seen.py", "pass\n", tmp_path, Limits(timeout=60.0), with_pytest=False)
    assert unseen.problems == ["the repro itself passes under plain python"]
