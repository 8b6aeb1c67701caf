"""Where no step can state the bug, the repro falls back to the latest step plain python fails as the original."""

from types import SimpleNamespace

from minimizer.stages.check import CheckReport
from minimizer.runner.plain import PlainRun
from minimizer.stages.state import latest_step_python_fails

FAILURE = "AssertionError: assert worst < 0.001"


class _Probe:
    """A stand-in session: steps 0..3 keep the script's check (plain python fails), later ones lost it."""

    def __init__(self, failing_steps: int, steady_steps: int | None = None, flaky: set[int] = frozenset()):
        self.failing = failing_steps
        # Steps from `steady_steps` on, and those in `flaky`, fail only on every other run (a kernel reading
        # memory nothing wrote).
        self.steady = failing_steps if steady_steps is None else steady_steps
        self.flaky = flaky
        self.runs: list[str] = []
        self.messages: list[str] = []
        self.progress = SimpleNamespace(message=self.messages.append)

    def plain(self, text, limits):
        self.runs.append(text)
        step = int(text.split()[1])
        steady = step < self.steady and step not in self.flaky
        fails = steady or (step < self.failing and len(self.runs) % 2 == 0)
        return PlainRun(returncode=1 if fails else 0, seconds=0.1, failure=FAILURE if fails else None)

    def call_all(self, calls):
        return [call() for call in calls]


def _fallback(probe: _Probe, steps: int, plain_failures=(FAILURE, FAILURE), runs: int = 1) -> str:
    history = [f"step {i}" for i in range(steps)]
    report = CheckReport([], [], plain=[PlainRun(1, 0.1, failure=f) for f in plain_failures])
    settings = SimpleNamespace(limits=None)
    return latest_step_python_fails(probe, history, history[-1], report, settings, runs)  # type: ignore[arg-type]


def test_the_latest_step_that_still_fails_is_found_by_bisection():
    probe = _Probe(failing_steps=4)
    assert _fallback(probe, steps=40) == "step 3"
    assert len(probe.runs) <= 7  # the best, then log2(40) probes
    assert "step 3 of 39" in probe.messages[-1]


def test_a_best_that_fails_already_is_kept_without_bisecting():
    probe = _Probe(failing_steps=100)
    assert _fallback(probe, steps=10) == "step 9" and probe.runs == ["step 9"]


def test_no_fallback_when_the_original_did_not_fail_steadily_under_python():
    probe = _Probe(failing_steps=4)
    assert _fallback(probe, steps=10, plain_failures=(FAILURE, None)) == "step 9" and probe.runs == []


def test_the_original_when_no_reduced_step_fails():
    probe = _Probe(failing_steps=1)
    assert _fallback(probe, steps=10) == "step 0"
    assert "keeping the original" in probe.messages[-1]


def test_steps_that_fail_only_now_and_then_are_passed_over_with_several_runs_per_probe():
    probe = _Probe(failing_steps=40, steady_steps=6)
    assert _fallback(probe, steps=40, runs=3) == "step 5"
    assert "step 5 of 39" in probe.messages[-1]


def test_a_steady_step_just_before_a_flaky_end_is_found_though_flaky_steps_lie_between_it_and_the_start():
    # Steps 10..30 fail now and then (a size shrunk, later grown back by another pass); 31..38 steadily again.
    probe = _Probe(failing_steps=40, steady_steps=39, flaky=set(range(10, 31)))
    assert _fallback(probe, steps=40, runs=3) == "step 38"
