from minimizer.candidate_log import CandidateLog


def test_summary_counts_runs_and_keeps_the_slowest_with_their_text():
    log = CandidateLog()
    for number, seconds in enumerate([1.0, 70.0, 2.0, 3.0, 65.0]):
        log.record(f"candidate {number}", seconds, timed_out=seconds > 60, cancelled=False)
    log.record("cancelled one", 5.0, timed_out=False, cancelled=True)
    summary = log.summary()
    assert summary["runs"] == 5 and summary["cancelled"] == 1
    assert summary["median_seconds"] == 3.0
    assert summary["timed_out"] == 2 and summary["timed_out_seconds"] == 135.0
    assert [entry["text"] for entry in summary["slowest"]] == ["candidate 1", "candidate 4", "candidate 3"]
    assert summary["slowest"][0]["timed_out"] and not summary["slowest"][2]["timed_out"]
