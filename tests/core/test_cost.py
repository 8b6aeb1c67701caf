"""What a plain python run costs (seconds, peak memory), and when a repro costs more than its original."""

from minimizer.runner.plain import PlainRun, cost_of, run_plain
from minimizer.runner.process import Limits
from minimizer.session import _cost_line, _costs_more


def test_a_plain_run_knows_its_peak_memory(tmp_path):
    small = run_plain("print(1)\n", "a.py", None, Limits(timeout=30))
    large = run_plain("x = bytearray(300 * 2**20)\nx[::4096] = b'1' * len(x[::4096])\n", "a.py", None, Limits(timeout=30))
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
