"""Where a reduction's time went (``minimizer.stage_clock``)."""

from __future__ import annotations

import time

from minimizer.stage_clock import StageClock


def test_each_stage_adds_up_in_the_order_stages_first_ran_and_the_original_runs_are_counted():
    clock = StageClock()
    for name in ("check", "reduce", "check"):
        with clock.stage(name):
            time.sleep(0.01)
    clock.ran_the_original(2.5)
    clock.ran_the_original(1.0)
    told = clock.to_json()
    assert list(told["stages"]) == ["check", "reduce"]
    assert told["stages"]["check"] >= 0.0 and told["original_runs"] == 2 and told["original_run_seconds"] == 3.5


def test_a_stage_that_raises_is_timed_too():
    clock = StageClock()
    try:
        with clock.stage("pin"):
            raise ValueError("nothing to reduce")
    except ValueError:
        pass
    assert "pin" in clock.seconds
