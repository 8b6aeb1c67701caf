"""Whether a regression test written from a repro (``minimizer.regression_test``) does its job: it fails today as
the repro does, under plain python and under pytest, and passes with ``torch.compile`` as the identity, which is
what it will do once the compiler is fixed (for a repro that compiles; a kernel's bug has no such stand-in).

Each run is a plain run (``minimizer.runner.plain``) in a folder of its own that holds the test and links to the
files beside the repro, so the test imports what the repro imports.
"""

from __future__ import annotations

import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from minimizer.runner.plain import PlainRun, failure_kind, run_plain
from minimizer.runner.run_types import Limits
from minimizer.runner.workspace import populate

# pytest's exit status where tests ran and one failed (not a usage or collection error).
_PYTEST_TESTS_FAILED = 1

_UNDER_PYTEST = """import sys
import pytest

sys.exit(pytest.main(["-q", "-p", "no:cacheprovider", "-o", "addopts=", {test!r}]))
"""

# A script run with torch.compile (as a call, and as a decorator with options) and torch._dynamo.optimize
# replaced by the identity: what the compiled code does once the compiler is right.
UNDER_THE_IDENTITY = """import runpy, sys
import torch


def _identity(model=None, **options):
    return model if model is not None else (lambda fn: fn)


torch.compile = _identity
torch._dynamo.optimize = lambda *args, **kwargs: (lambda fn: fn)
sys.argv = [{script!r}]
runpy.run_path({script!r}, run_name="__main__")
"""


@dataclass(frozen=True)
class TestCheck:
    """How the test ran: under plain python, under pytest, with ``torch.compile`` as the identity (``None``:
    not asked, the repro compiles nothing), against how the repro fails under plain python."""

    repro_failure: str | None
    plain: PlainRun
    pytest: PlainRun | None
    identity: PlainRun | None

    @property
    def problems(self) -> list[str]:
        """What keeps the test from being the regression test it claims to be (none: it is)."""

        found = []
        if self.repro_failure is None:
            found.append("the repro itself passes under plain python")
        elif failure_kind(self.plain.failure) != failure_kind(self.repro_failure):
            found.append(f"under plain python the test {self.plain.describe()}, the repro fails with {failure_kind(self.repro_failure)}")
        if self.pytest is not None and self.pytest.returncode != _PYTEST_TESTS_FAILED:
            found.append(f"under pytest the test does not fail (exit status {self.pytest.returncode})")
        if self.identity is not None and self.identity.returncode != 0:
            found.append(f"with torch.compile as the identity the test {self.identity.describe()}: not the compiler's bug")
        return found

    def describe(self) -> str:
        """One line a person reads."""

        if self.problems:
            return "; ".join(self.problems)
        told = ["fails under plain python as the repro does"]
        told += ["and under pytest"] if self.pytest is not None else []
        told += ["passes with torch.compile as the identity"] if self.identity is not None else []
        return ", ".join(told)


def check_regression_test(
    test: str,
    test_name: str,
    repro: str,
    beside: Path,
    limits: Limits,
    *,
    with_pytest: bool = True,
    repro_failure: str | None = None,
) -> TestCheck:
    """Run ``test`` (to be written as ``test_name``) and the ``repro`` it came from beside ``beside``'s files, the
    runs at once; ``repro_failure``: how the repro fails under plain python where that is known already (the
    reduction's confirmation ran it), so that it is not run again."""

    compiles = "torch.compile" in repro or "_dynamo.optimize" in repro
    with tempfile.TemporaryDirectory(prefix="minimizer-test-") as folder:
        work = Path(folder)
        (work / test_name).write_text(test)
        populate(beside, work)
        asked = {
            "repro": (repro, "repro.py", str(beside)) if repro_failure is None else None,
            "plain": (test, test_name, str(beside)),
            "pytest": (_UNDER_PYTEST.format(test=test_name), "_run_pytest.py", folder) if with_pytest else None,
            "identity": (UNDER_THE_IDENTITY.format(script=test_name), "_run_identity.py", folder) if compiles else None,
        }
        wanted = {name: run for name, run in asked.items() if run is not None}
        with ThreadPoolExecutor(max_workers=len(wanted)) as pool:
            futures = {name: pool.submit(run_plain, *run, limits) for name, run in wanted.items()}
            ran = {name: future.result() for name, future in futures.items()}
    if repro_failure is None:
        repro_failure = ran["repro"].failure
    return TestCheck(repro_failure, ran["plain"], ran.get("pytest"), ran.get("identity"))
