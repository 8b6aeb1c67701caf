from minimizer.candidate_log import RUNS_BEFORE_ADAPTING, CandidateLog


def test_summary_counts_runs_and_keeps_the_slowest_with_their_text():
    log = CandidateLog()
    for number, seconds in enumerate([1.0, 70.0, 2.0, 3.0, 65.0]):
        stacks = f"File bug.py, line {number}" if seconds > 60 else ""
        log.record(f"candidate {number}", seconds, timed_out=seconds > 60, cancelled=False, stacks=stacks)
    log.record("cancelled one", 5.0, timed_out=False, cancelled=True)
    summary = log.summary()
    assert summary["runs"] == 5 and summary["cancelled"] == 1
    assert summary["median_seconds"] == 3.0
    assert summary["timed_out"] == 2 and summary["timed_out_seconds"] == 135.0
    assert [entry["text"] for entry in summary["slowest"]] == ["candidate 1", "candidate 4", "candidate 3"]
    assert summary["slowest"][0]["timed_out"] and not summary["slowest"][2]["timed_out"]
    assert summary["slowest"][0]["stacks"] == "File bug.py, line 1" and "stacks" not in summary["slowest"][2]


def test_the_time_limit_follows_the_candidates_own_runs_once_enough_finished():
    log = CandidateLog()
    for _ in range(RUNS_BEFORE_ADAPTING - 1):
        log.record("x = 1", 4.0, timed_out=False, cancelled=False)
    log.record("x = 2", 0.1, timed_out=False, cancelled=True)  # a cancelled run says nothing of run times
    assert log.time_limit(73.0, factor=3.0, floor=10.0) == 73.0
    log.record("x = 3", 8.0, timed_out=False, cancelled=False)
    assert log.time_limit(73.0, factor=3.0, floor=10.0) == 3 * 4.0 + 10  # the 90th percentile of nine 4s and an 8
    assert log.time_limit(73.0, factor=3.0, floor=30.0) == 30.0  # never below the floor
    assert log.time_limit(20.0, factor=3.0, floor=10.0) == 20.0  # never above the first limit
    stuck = CandidateLog()
    for _ in range(RUNS_BEFORE_ADAPTING + 2):
        stuck.record("while True: pass", 73.0, timed_out=True, cancelled=False)  # runs at the limit: not finished
    assert stuck.time_limit(73.0, factor=3.0, floor=10.0) == 73.0


def test_the_summary_gives_the_median_parts_of_runs_that_show_the_bug_and_of_those_that_do_not():
    log = CandidateLog()
    for seconds, shown in ((2.0, True), (3.0, True), (4.0, True), (0.5, False)):
        log.record("x", seconds, timed_out=False, cancelled=False, started=0.0, interesting=shown,
                   parts={"parent": 0.1, "compiled calls": seconds - 0.1})
    log.record("x", 9.0, timed_out=False, cancelled=True, started=0.0, parts={"parent": 5.0})  # cancelled: no parts
    parts = log.summary()["median_parts"]
    assert parts == {"shows the bug": {"parent": 0.1, "compiled calls": 2.9}, "does not": {"parent": 0.1, "compiled calls": 0.4}}
