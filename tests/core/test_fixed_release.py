"""``--fixed-in``: the repro must pass where the bug is fixed (minimizer.stages.fixed), on stand-in plain runs."""

import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from minimizer.errors import MinimizerError
from minimizer.runner.plain import PlainRun
from minimizer.stages.fixed import check_fixed_release, passing_where_fixed

FAILURE = "AssertionError: assert torch.allclose(_, _)"


class StandIn:
    """Plain runs of steps `n = K`: here every step fails as the original did; where the bug is fixed, a step
    fails only once its input is under five elements (another cause of the same finding, as seed 589's)."""

    def __init__(self, fixed_in):
        self.options = SimpleNamespace(fixed_in=fixed_in)
        self.progress = SimpleNamespace(message=lambda text: None)
        self.asked: list[tuple[str, str | None]] = []

    def plain(self, source, limits, python=None):
        self.asked.append((source, python))
        fails = python is None or int(source.split("= ")[1]) < 5
        return PlainRun(1 if fails else 0, 0.1, failure=FAILURE if fails else None)


REPORT = SimpleNamespace(plain=[PlainRun(1, 0.1, failure=FAILURE)])
HISTORY = [f"n = {n}" for n in (64, 32, 16, 8, 6, 4, 2)]


def test_the_latest_step_that_passes_where_the_bug_is_fixed_replaces_a_repro_that_fails_there():
    runs = StandIn(Path(sys.executable))
    assert passing_where_fixed(runs, HISTORY, "n = 2", REPORT, None) == "n = 6"


def test_a_repro_that_passes_where_the_bug_is_fixed_stays_and_without_the_option_nothing_runs():
    runs = StandIn(Path(sys.executable))
    assert passing_where_fixed(runs, HISTORY, "n = 8", REPORT, None) == "n = 8"
    assert runs.asked == [("n = 8", sys.executable)]
    quiet = StandIn(None)
    assert passing_where_fixed(quiet, HISTORY, "n = 2", REPORT, None) == "n = 2" and quiet.asked == []


def test_an_original_that_fails_where_the_bug_is_fixed_is_refused():
    with pytest.raises(MinimizerError, match="the bug is not fixed there"):
        check_fixed_release(StandIn(Path(sys.executable)), "n = 2", None)
    check_fixed_release(StandIn(Path(sys.executable)), "n = 64", None)


def test_a_repro_that_fails_where_fixed_is_kept_with_a_warning_where_the_original_fails_two_ways():
    runs = StandIn(Path(sys.executable))
    said: list[str] = []
    runs.progress = SimpleNamespace(message=said.append)
    flaky = SimpleNamespace(plain=[PlainRun(1, 0.1, failure=FAILURE), PlainRun(0, 0.1)])
    assert passing_where_fixed(runs, HISTORY, "n = 2", flaky, None) == "n = 2"
    assert len(said) == 1 and said[0].startswith("warning: the repro fails under") and "disagree" in said[0]
