"""What a plain python run costs (seconds, peak memory), and when a repro costs more than its original."""

import threading

from minimizer.options import Options
from minimizer.runner.plain import PlainRun, cost_of, run_plain
from minimizer.runner.run_types import Limits, RunResult
from minimizer.runs import Runs
from minimizer.session import _cost_line, _costs_more
from minimizer.stages.cost import CostBound
from minimizer.stages.pin import Target
from oracles.api import Verdict


def test_a_plain_run_knows_its_peak_memory(tmp_path):
    small = run_plain("print(1)\n", "a.py", None, Limits(timeout=30))
    # The peak is read while the process runs (every 50 ms): one it held only in its last moments may be missed.
    hold = "x = bytearray(300 * 2**20)\nx[::4096] = b'1' * len(x[::4096])\nimport time\ntime.sleep(0.5)\n"
    large = run_plain(hold, "a.py", None, Limits(timeout=30))
    assert small.peak_mb is not None and large.peak_mb is not None
    assert large.peak_mb > small.peak_mb + 250


def test_cost_is_the_slowest_run_and_the_largest_peak():
    runs = [PlainRun(1, 2.0, peak_mb=300.0), PlainRun(1, 3.0, peak_mb=250.0), PlainRun(None, 1.0)]
    assert cost_of(runs) == {"seconds": 3.0, "peak_mb": 300.0}
    assert cost_of([PlainRun(None, 1.0)]) == {"seconds": 1.0, "peak_mb": None}


def test_a_repro_costs_more_only_beyond_noise():
    original = {"seconds": 10.0, "peak_mb": 800.0}
    assert not _costs_more({"original": original, "repro": {"seconds": 14.0, "peak_mb": 900.0}})
    assert _costs_more({"original": original, "repro": {"seconds": 30.0, "peak_mb": 500.0}})
    assert _costs_more({"original": original, "repro": {"seconds": 2.0, "peak_mb": 2000.0}})
    assert not _costs_more({"original": original, "repro": {"seconds": 2.0, "peak_mb": None}})
    line = _cost_line({"original": original, "repro": {"seconds": 1.25, "peak_mb": 310.4}})
    assert line == "repro 1.2 s, 310 MB; original 10.0 s, 800 MB"


def _oracle_run(seconds: float, peak_mb: float | None) -> RunResult:
    return RunResult(seconds=seconds, verdicts={"numerical": Verdict(True, "numerical: float32")}, peak_mb=peak_mb)


def test_the_cost_bound_is_the_originals_slowest_and_largest_run_with_a_margin():
    bound = CostBound.of([_oracle_run(4.0, 600.0), _oracle_run(5.0, 500.0), RunResult(seconds=90.0, timed_out=True)])
    assert bound == CostBound(seconds=2.0 * 5.0 + 5.0, peak_mb=1.25 * 600.0 + 256.0)
    assert bound.exceeded_by(_oracle_run(14.0, 1000.0)) is None
    assert "took 16.0 s" in bound.exceeded_by(_oracle_run(16.0, 600.0))
    assert "peaked at 2000 MB" in bound.exceeded_by(_oracle_run(3.0, 2000.0))
    assert CostBound.of([RunResult(seconds=90.0, timed_out=True)]) is None


class _Messages:
    def __init__(self):
        self.lines = []

    def message(self, text):
        self.lines.append(text)

    def tested(self, interesting, cached):
        pass


def test_a_candidate_that_shows_the_bug_but_costs_markedly_more_is_refused(tmp_path):
    """The default config of a library model: same bug, fewer tokens, three times the memory."""

    script = tmp_path / "a.py"
    script.write_text("x = 1\n")
    progress = _Messages()
    runs = Runs(Options(script=script), progress, "x = 1\n")
    try:
        runs.cost_bound = CostBound.of([_oracle_run(5.0, 700.0)])
        target = Target("numerical", "numerical: float32")
        costs = {"small = 1\n": _oracle_run(4.0, 650.0), "default = 1\n": _oracle_run(6.0, 2100.0)}
        runs.run = lambda source, settings, cancel: costs[source]
        settings = runs.settings(("numerical",), 30.0)
        assert runs.still_fails("small = 1\n", settings, target, threading.Event()) is True
        assert runs.still_fails("default = 1\n", settings, target, threading.Event()) is False
        assert runs.refused_for_cost == 1
        assert any("costs markedly more than the original" in line for line in progress.lines)
    finally:
        runs.close()


class _SideBySide:
    """The original's and the repro's plain runs again, answered from a script of seconds."""

    def __init__(self, seconds):
        self.seconds, self.ran = list(seconds), []

    def __call__(self):
        self.ran += ["original", "repro"]
        return [PlainRun(1, seconds, peak_mb=400.0) for seconds in self.seconds]


def test_a_repro_that_reads_slower_is_measured_again_beside_the_original():
    from minimizer.stages.cost import plain_costs

    checked, confirmed = [PlainRun(1, 5.8, peak_mb=470.0)], [PlainRun(1, 10.0, peak_mb=460.0)]
    runs = _SideBySide([5.5, 5.1])
    cost = plain_costs(checked, confirmed, runs)
    assert runs.ran == ["original", "repro"]  # both again, both caches warm
    assert cost == {"original": {"seconds": 5.5, "peak_mb": 400.0}, "repro": {"seconds": 5.1, "peak_mb": 400.0}, "again": True}
    quicker = _SideBySide([])
    assert plain_costs(checked, [PlainRun(1, 3.0, peak_mb=460.0)], quicker)["repro"]["seconds"] == 3.0
    assert quicker.ran == []  # nothing run again where the repro already reads no slower
    noise = _SideBySide([])
    assert plain_costs([PlainRun(1, 19.7)], [PlainRun(1, 20.4)], noise)["repro"]["seconds"] == 20.4
    assert noise.ran == []  # nor within a few percent
