"""The folder where candidates of one reduction leave verdicts for each other."""

import pytest

from minimizer.runner.run_types import RunResult
from minimizer.runner.shared_verdicts import SharedVerdicts, SharingPayoff

VERDICTS = {"numerical": {"fires": True, "signature": "numerical: float32 value", "detail": "call 0 of f"}}


def test_a_verdict_put_under_a_key_is_found_under_it(tmp_path):
    table = SharedVerdicts(tmp_path / "verdicts", ["numerical"], seed=0)
    assert table.get("abc") is None
    table.put("abc", VERDICTS)
    assert table.get("abc") == VERDICTS
    assert table.get("abd") is None
    assert not list((tmp_path / "verdicts").glob("*.tmp"))  # written whole, then renamed


def test_other_oracles_or_seeds_do_not_see_the_verdict(tmp_path):
    SharedVerdicts(tmp_path, ["numerical"], seed=0).put("abc", VERDICTS)
    assert SharedVerdicts(tmp_path, ["numerical", "script"], seed=0).get("abc") is None
    assert SharedVerdicts(tmp_path, ["numerical"], seed=1).get("abc") is None
    assert SharedVerdicts(tmp_path, ["numerical"], seed=0).get("abc") == VERDICTS


def test_an_unreadable_entry_counts_as_none(tmp_path):
    table = SharedVerdicts(tmp_path, ["numerical"], seed=0)
    table.put("abc", VERDICTS)
    next(tmp_path.glob("*.json")).write_text("{not json")
    assert table.get("abc") is None


def traced(seconds, tracing, *, key="k", shared=False):
    return RunResult(seconds=seconds, fingerprint=key, shared_verdict=shared, tracing_seconds=tracing)


def test_sharing_stays_on_while_it_saves_more_than_the_tracing_costs():
    payoff = SharingPayoff(warm_up=4)
    for result in [traced(10.0, 0.5), traced(10.0, 0.5), traced(0.6, 0.5, shared=True), traced(10.0, 0.5)]:
        payoff.observe(result)
    assert payoff.enabled
    assert (payoff.fingerprinted, payoff.shared) == (4, 1)
    assert payoff.saved_seconds == pytest.approx(9.5)  # one shared run, unshared runs took 9.5 s beyond tracing
    assert payoff.tracing_seconds == pytest.approx(2.0)


def test_sharing_switches_off_for_good_when_cheap_compiles_do_not_repay_the_tracing():
    payoff = SharingPayoff(warm_up=3)
    payoff.observe(traced(0.9, 0.4))
    payoff.observe(traced(0.9, 0.4))
    assert payoff.enabled  # still warming up
    payoff.observe(traced(0.5, 0.4, shared=True))  # saved 0.5 s, tracing cost 1.2 s
    assert not payoff.enabled and payoff.switched_off_after == 3
    payoff.observe(traced(0.4, 0.4, shared=True))
    assert not payoff.enabled


def test_runs_without_tracing_do_not_count_and_reasons_are_tallied():
    payoff = SharingPayoff(warm_up=1)
    payoff.observe(RunResult(seconds=5.0))  # sharing was off for this run, or its oracle cannot share
    assert payoff.traced == 0 and payoff.enabled
    payoff.observe(RunResult(seconds=5.0, tracing_seconds=0.3, fingerprint_why_not="a graph break runs eager code"))
    assert payoff.why_not == {"a graph break runs eager code": 1}
    assert payoff.to_json()["fingerprinted"] == 0
