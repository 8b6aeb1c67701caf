"""--max-time covers stating and confirming the repro: the reduction stops early enough for them."""

from types import SimpleNamespace

from minimizer.time_budget import reduction_deadline, seconds_for_the_end


def _report(oracle_seconds, plain_seconds):
    return SimpleNamespace(
        runs=[SimpleNamespace(seconds=s) for s in oracle_seconds],
        plain=[SimpleNamespace(seconds=s) for s in plain_seconds],
    )


def test_the_end_is_a_stating_run_and_the_confirmations_jobs_at_a_time_each_as_long_as_a_plain_run():
    report = _report([12.0, 40.0], [25.0, 30.0])
    assert seconds_for_the_end(report, jobs=8, confirm=2) == 30 + 30  # four confirmations side by side
    assert seconds_for_the_end(report, jobs=1, confirm=2) == 30 + 4 * 30
    assert seconds_for_the_end(report, jobs=2, confirm=2) == 30 + 2 * 30
    assert seconds_for_the_end(_report([12.0], []), jobs=8, confirm=1) == 12 + 12  # no plain run: the oracles'


def test_the_reduction_keeps_at_least_half_of_the_limit():
    assert reduction_deadline(100.0, None, 50.0) is None
    assert reduction_deadline(100.0, 300.0, 50.0) == 350.0
    assert reduction_deadline(100.0, 60.0, 50.0) == 130.0
