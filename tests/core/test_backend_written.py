"""The repro compiled with the culprit's cheaper backend, written into its code (``stages.backend_written``)."""

from __future__ import annotations

from minimizer.runner.plain import PlainRun
from minimizer.runner.run_types import Limits, RunResult, RunSettings
from minimizer.stages.backend_written import with_the_cheapest_backend
from minimizer.stages.confirm import Confirmation
from minimizer.stages.culprit import Culprit
from oracles.api import ExceptionInfo

REPRO = "import torch\nassert torch.compile(lambda x: x + 1)(torch.ones(1)).requires_grad\n"
SETTINGS = RunSettings("repro.py", ".", ("script",), Limits(timeout=30))


class _Runs:
    """Plain runs answered by whether the text compiles with the backend that still fails."""

    def __init__(self, failing_with: str, claimed: str | None):
        self.failing_with, self.claimed, self.ran = failing_with, claimed, []
        self.progress = self

    def plain(self, text, limits):
        self.ran.append(text)
        fails = f'backend="{self.failing_with}"' in text
        return PlainRun(1 if fails else 0, 1.0, failure=self.claimed if fails else None)

    def call_all(self, calls):
        return [call() for call in calls]

    def message(self, text):
        pass


def _confirmation() -> Confirmation:
    oracle_run = RunResult(seconds=1.0, exception=ExceptionInfo(type="AssertionError", message="", check=True))
    return Confirmation(REPRO, [oracle_run], [PlainRun(1, 1.0, failure=oracle_run.failure)] * 2)


def test_a_cheaper_backend_that_fails_as_claimed_is_written_into_the_repro():
    confirmation = _confirmation()
    aot = Culprit("AOTAutograd", "aot_eager", [("eager", False), ("aot_eager", True)])
    runs = _Runs("aot_eager", confirmation.expected)
    kept = with_the_cheapest_backend(runs, confirmation, aot, SETTINGS)
    assert 'torch.compile(lambda x: x + 1, backend="aot_eager")' in kept.text and kept.python_fails


def test_inductors_bug_or_a_backend_that_fails_otherwise_leaves_the_repro_as_it_is():
    confirmation = _confirmation()
    inductor = Culprit("Inductor", "inductor", [("inductor", True)])
    assert with_the_cheapest_backend(_Runs("inductor", confirmation.expected), confirmation, inductor, SETTINGS) is confirmation
    aot = Culprit("AOTAutograd", "aot_eager", [("eager", False), ("aot_eager", True)])
    runs = _Runs("nothing", confirmation.expected)  # with aot_eager written in, plain python passes: not kept
    assert with_the_cheapest_backend(runs, confirmation, aot, SETTINGS) is confirmation and len(runs.ran) == 2
