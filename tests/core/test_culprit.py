"""The backend ladder on fake runs: which backend shows the bug names the layer."""

import os

import pytest

from minimizer.runner.run_types import RunSettings
from minimizer.stages.culprit import LADDER, NOT_TOLD, THE_SCRIPTS_BACKEND, name_the_culprit, read_ladder
from oracles.forced_backend import BACKEND_VARIABLE, with_forced_backend


class _Runs:
    """Answers each run with the backend it was asked to compile with."""

    def __init__(self):
        self.asked = []

    def call_all(self, calls):
        return [call() for call in calls]

    def run(self, text, settings, cancel=None):
        assert dict(settings.env)["KEEP"] == "1"  # the run's own environment stays
        backend = dict(settings.env)[BACKEND_VARIABLE]
        self.asked.append(backend)
        return backend


class _Target:
    def __init__(self, *showing):
        self.showing = showing

    def shown_by(self, result):
        return result in self.showing


SETTINGS = RunSettings(filename="bug.py", origin_dir=".", oracles=("numerical",), env=(("KEEP", "1"),))


@pytest.mark.parametrize(
    "showing, layer, described",
    [
        (("eager", "aot_eager", "inductor"), "Dynamo", "Dynamo (eager yes)"),
        (("aot_eager", "aot_eager_decomp_partition", "inductor"), "AOTAutograd", "AOTAutograd (eager no, aot_eager yes)"),
        (("aot_eager_decomp_partition", "inductor"), "decompositions and partitioner", None),
        (("inductor",), "Inductor", "Inductor (eager no, aot_eager no, aot_eager_decomp_partition no, inductor yes)"),
        ((), THE_SCRIPTS_BACKEND, f"{THE_SCRIPTS_BACKEND} (eager no, aot_eager no, aot_eager_decomp_partition no, inductor no)"),
    ],
)
def test_the_first_backend_that_shows_the_bug_names_the_layer(showing, layer, described):
    runs = _Runs()
    culprit = name_the_culprit(runs, "text", _Target(*showing), SETTINGS, compiles=True)
    assert runs.asked == [backend for backend, _ in LADDER]
    assert culprit.layer == layer
    assert culprit.backend == (showing[0] if showing else "")
    if described:
        assert culprit.describe() == described
    assert read_ladder(culprit.describe()) == (layer, culprit.ladder)  # the issue body reads the header's line back
    assert culprit.to_json()["ladder"][-1]["shows_the_bug"] == bool(showing)


def test_a_script_that_compiles_nothing_has_no_layer_and_runs_nothing():
    runs = _Runs()
    culprit = name_the_culprit(runs, "text", _Target("eager"), SETTINGS, compiles=False)
    assert culprit.layer == NOT_TOLD and runs.asked == []
    assert culprit.describe().startswith("not told: the script compiles nothing")


def test_the_forced_backend_replaces_the_scripts_and_drops_what_only_inductor_reads(monkeypatch):
    kwargs = {"backend": "inductor", "mode": "max-autotune", "fullgraph": True, "options": {"x": 1}}
    monkeypatch.delenv(BACKEND_VARIABLE, raising=False)
    assert with_forced_backend(kwargs) is kwargs
    monkeypatch.setenv(BACKEND_VARIABLE, "aot_eager")
    assert with_forced_backend(kwargs) == {"backend": "aot_eager", "fullgraph": True}
    monkeypatch.setenv(BACKEND_VARIABLE, "inductor")
    assert with_forced_backend({"backend": print, "mode": "reduce-overhead"}) == {"backend": "inductor", "mode": "reduce-overhead"}
    assert os.environ[BACKEND_VARIABLE] == "inductor"


def test_a_reduction_whose_max_time_is_spent_names_no_culprit(tmp_path):
    import time
    from types import SimpleNamespace

    from minimizer.options import Options
    from minimizer.session import Session

    messages = []
    session = Session.__new__(Session)  # only what naming the culprit reads
    session.options = Options(script=tmp_path / "bug.py", max_time=5.0)
    session.progress = SimpleNamespace(message=messages.append)
    session.runs = None  # nothing may run
    best = SimpleNamespace(started=time.monotonic() - 6.0)
    assert session._culprit(None, best, None) is None
    assert messages == ["culprit: not named, --max-time is spent (`minimizer check` on the repro names it)"]
    session.options = Options(script=tmp_path / "bug.py", culprit=False)
    assert session._culprit(None, best, None) is None and len(messages) == 1


@pytest.mark.parametrize(
    "showing, cheapest",
    [(("eager", "aot_eager", "inductor"), "eager"), (("aot_eager_decomp_partition", "inductor"), "aot_eager_decomp_partition"),
     (("inductor",), None), ((), None)],
)
def test_candidates_compile_with_the_cheapest_backend_below_inductor_that_shows_the_bug(showing, cheapest):
    from minimizer.stages.culprit import cheapest_backend

    runs = _Runs()
    assert cheapest_backend(runs, "text", _Target(*showing), SETTINGS) == cheapest
    assert runs.asked == ["eager", "aot_eager", "aot_eager_decomp_partition"]  # Inductor itself is not asked


def test_a_script_that_chooses_its_backend_keeps_it():
    from minimizer.stages.culprit import names_its_backend

    assert names_its_backend("f = torch.compile(g, backend=my_backend)\n")
    assert names_its_backend("f = torch._dynamo.optimize('aot_eager')(g)\n")
    assert not names_its_backend("f = torch.compile(g, mode='max-autotune')\n")


def test_the_compiler_bisectors_finding_is_read_and_told_after_the_layer(monkeypatch):
    import minimizer.stages.subsystem as subsystem
    from minimizer.stages.culprit import Culprit, with_subsystem
    from minimizer.stages.subsystem import Subsystem, read_bisection

    printed = "Bisection complete: BisectionResult(backend='inductor', subsystem='post_grad_passes', bisect_number=1, debug_info='post_grad_custom_pre_pass')"
    found = read_bisection("Binary search completed ...\n" + printed + "\n")
    assert found == Subsystem("post_grad_passes", 1, "post_grad_custom_pre_pass")
    assert read_bisection("Bisection complete: BisectionResult(backend='inductor', subsystem='lowerings', bisect_number=None, debug_info=None)") == Subsystem("lowerings")
    assert read_bisection("Bisection complete: no issue found") == "the bisector found no issue"
    assert read_bisection("Traceback ...") == "the bisector did not finish"

    ladder = [("eager", False), ("aot_eager", False), ("aot_eager_decomp_partition", False), ("inductor", True)]
    inductor = Culprit("Inductor", "inductor", ladder)
    monkeypatch.setattr(subsystem, "ships_the_bisector", lambda python=None: True)
    monkeypatch.setattr(subsystem, "bisect_inductor", lambda *args, **kwargs: found)
    named = with_subsystem(inductor, "repro", "repro.py", None, "AssertionError: not close")
    assert named.describe() == (
        "Inductor: post_grad_passes, application 1 (post_grad_custom_pre_pass) "
        "(eager no, aot_eager no, aot_eager_decomp_partition no, inductor yes)"
    )
    assert read_ladder(named.describe()) == ("Inductor: post_grad_passes, application 1 (post_grad_custom_pre_pass)", ladder)
    dynamo = Culprit("Dynamo", "eager", [("eager", True)])
    assert with_subsystem(dynamo, "repro", "repro.py", None, "AssertionError") is dynamo  # not Inductor's: no bisection
    monkeypatch.setattr(subsystem, "ships_the_bisector", lambda python=None: False)
    assert "no compiler bisector" in with_subsystem(inductor, "repro", "repro.py", None, "AssertionError").detail


def test_the_scripts_own_backend_is_named_where_no_rung_shows_the_bug():
    runs = _Runs()
    text = "import torch\nf = torch.compile(lambda x: x, backend=planted_backend)\n"
    culprit = name_the_culprit(runs, text, _Target(), SETTINGS, compiles=True)
    assert culprit.layer == THE_SCRIPTS_BACKEND and culprit.backend == "planted_backend"
    assert culprit.describe().startswith("the script's backend planted_backend or its compile options (eager no")
