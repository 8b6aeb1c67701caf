"""The culprit down to the operator (``minimizer.stages.operator``, ``oracles.eager_ops``)."""

from __future__ import annotations

import dataclasses

from minimizer.runner.run_types import Limits, RunResult, RunSettings
from minimizer.stages.culprit import Culprit
from minimizer.stages.operator import with_operator
from minimizer.stages.pin import Target
from oracles.api import Verdict
from oracles.eager_ops import EAGER_OPS_VARIABLE, RECORD_OPS_VARIABLE, aten_operator, read_operators

REMAINDER = """import torch
a = torch.arange(8.0)
b = torch.full((8,), float("inf"))
out = torch.compile(lambda a, b: torch.remainder(a, b) + 1)(a, b)
"""


class _Runs:
    """Runs answered by the operators each run leaves to eager: the bug goes where all of ``mends`` are eager
    (one operator's lowering; two for a fusion)."""

    def __init__(self, operators: list[str], mends: set[str] | str | None, each_mends: set[str] = frozenset()):
        self.operators, self.asked = operators, []
        self.mends = {mends} if isinstance(mends, str) else (mends or None)
        self.each_mends = each_mends  # a fusion: any one of these eager mends it

    def run(self, text, settings, cancel=None):
        env = dict(settings.env)
        if RECORD_OPS_VARIABLE in env:
            with open(env[RECORD_OPS_VARIABLE], "w") as out:
                out.write(__import__("json").dumps(self.operators) + "\n")
            return RunResult(seconds=0.0, verdicts={"numerical": Verdict(False)})
        eager = env.get(EAGER_OPS_VARIABLE, "")
        self.asked.append(eager)
        fires = self.mends is None or not self.mends <= set(eager.split(","))
        fires = fires and not self.each_mends & set(eager.split(","))
        return RunResult(seconds=0.0, verdicts={"numerical": Verdict(fires, "numerical: float32 value" if fires else "")})

    def call_all(self, calls):
        return [call() for call in calls]


SETTINGS = RunSettings("repro.py", ".", ("numerical",), Limits(timeout=30))
TARGET = Target("numerical", "numerical: float32 value")
INDUCTOR = Culprit("Inductor", "inductor", [("eager", False), ("inductor", True)])
OPERATORS = [f"aten.op{i}.default" for i in range(16)]


def test_the_operator_is_found_by_halves_in_fewer_runs_than_operators():
    runs = _Runs(OPERATORS, mends="aten.op11.default")
    culprit = with_operator(runs, INDUCTOR, "text", TARGET, SETTINGS)
    assert culprit.operator == "aten.op11.default"
    assert culprit.describe().startswith("Inductor, operator aten.op11.default (eager no")
    assert runs.asked[0] == ",".join(OPERATORS)  # first: is it any operator's lowering at all?
    assert len(runs.asked) == 1 + 2 * 4  # then both halves at each of four levels


def test_no_operator_is_named_where_none_alone_mends_it_or_the_layer_is_not_inductors():
    assert with_operator(_Runs(["aten.add.Tensor"], mends=None), INDUCTOR, "text", TARGET, SETTINGS).operator == ""
    fusion = _Runs(OPERATORS, mends={"aten.op2.default", "aten.op13.default"})  # one in each half
    assert with_operator(fusion, INDUCTOR, "text", TARGET, SETTINGS).operator == ""
    dynamo = dataclasses.replace(INDUCTOR, layer="Dynamo")
    runs = _Runs(["aten.add.Tensor"], mends="aten.add.Tensor")
    assert with_operator(runs, dynamo, "text", TARGET, SETTINGS) == dynamo and runs.asked == []


def test_where_each_of_several_fused_operators_mends_it_the_last_is_named_with_the_others():
    fused = {"aten.op3.default", "aten.op9.default", "aten.op14.default"}
    runs = _Runs(OPERATORS, mends=None, each_mends=fused)
    culprit = with_operator(runs, INDUCTOR, "text", TARGET, SETTINGS)
    assert (culprit.operator, culprit.fused) == ("aten.op14.default", ("aten.op3.default", "aten.op9.default"))
    assert "operator aten.op14.default (fused with op3.default, op9.default) (eager no" in culprit.describe()
    assert culprit.to_json()["fused_with"] == ["aten.op3.default", "aten.op9.default"]


def _answered_by_operator(mending: dict[str, bool]):
    """A run per candidate text: the bug shows unless the candidate's operator is eager and mends it there."""

    def run(source, settings, cancel=None):
        eager = dict(settings.env).get(EAGER_OPS_VARIABLE)
        fires = not (eager == "aten.div.Tensor_mode" and mending[source])
        return RunResult(seconds=1.0, verdicts={"numerical": Verdict(fires, "numerical: float32 value" if fires else "")})

    return run


# Two candidates that both still fail: one keeps the bug in the held operator, one swapped it for another
# (``rounding_mode="trunc"`` dropped, a cast after it: the float difference is another operator's).
CANDIDATES = {"torch.div(a, b, rounding_mode='trunc')\n": True, "torch.div(a, b).long()\n": False}


def test_a_step_that_loses_the_held_operator_is_another_bug(tmp_path):
    import threading

    from minimizer.options import Options
    from minimizer.runs import Runs

    script = tmp_path / "a.py"
    script.write_text("x = 1\n")
    runs = Runs(Options(script=script), _Quiet(), "x = 1\n")
    try:
        runs.run = _answered_by_operator(CANDIDATES)
        held = dataclasses.replace(TARGET, operator="aten.div.Tensor_mode")
        settings = runs.settings(("numerical",), 30.0)
        answers = {text: runs.still_fails(text, settings, held, threading.Event()) for text in CANDIDATES}
        assert answers == CANDIDATES
        assert all(runs.still_fails(text, settings, TARGET, threading.Event()) for text in CANDIDATES)
    finally:
        runs.close()


def test_the_graph_reducer_holds_the_operator_too():
    import threading

    from minimizer.graph.reduce import _Pin
    from oracles.bug import Bug

    pin = _Pin("numerical", Bug("numerical: float32 value"), "aten.div.Tensor_mode")
    run = _answered_by_operator(CANDIDATES)
    assert {text: pin.still_fails(run, SETTINGS, text, threading.Event()) for text in CANDIDATES} == CANDIDATES


class _Quiet:
    def message(self, text):
        pass

    def tested(self, interesting, cached):
        pass


def test_operators_are_read_once_each_in_graph_order(tmp_path):
    path = tmp_path / "ops.jsonl"
    path.write_text('["aten.remainder.Tensor", "aten.add.Tensor"]\n["aten.add.Tensor", "aten.mul.Tensor"]\n')
    assert read_operators(str(path)) == ["aten.remainder.Tensor", "aten.add.Tensor", "aten.mul.Tensor"]
    assert read_operators(str(tmp_path / "none")) == []
    import torch

    assert aten_operator("aten.remainder.Tensor") is torch.ops.aten.remainder.Tensor
    assert aten_operator("aten.no_such_op.default") is None


def test_the_recording_backend_writes_down_the_operators_before_decomposition(tmp_path):
    from minimizer.runner.process import run_candidate
    from oracles.forced_backend import BACKEND_VARIABLE, RECORDING_OPERATORS

    path = tmp_path / "ops.jsonl"
    env = ((BACKEND_VARIABLE, RECORDING_OPERATORS), (RECORD_OPS_VARIABLE, str(path)))
    result = run_candidate(REMAINDER, RunSettings("repro.py", str(tmp_path), ("numerical",), Limits(timeout=120), env=env))
    assert result.completed
    assert read_operators(str(path)) == ["aten.remainder.Tensor", "aten.add.Tensor"]


def test_the_operator_is_not_searched_where_its_rounds_would_not_fit():
    from minimizer.stages.operator import mending_operator, search_rounds

    assert search_rounds(16, jobs=1) == 1 + 2 * 4 and search_rounds(16, jobs=2) == 1 + 4 and search_rounds(1, 1) == 1
    runs = _Runs(OPERATORS, mends="aten.op11.default")
    runs.jobs = 1
    assert mending_operator(runs, "text", TARGET, SETTINGS, most_rounds=8) == "" and runs.asked == []  # recorded only
    assert mending_operator(runs, "text", TARGET, SETTINGS, most_rounds=9) == "aten.op11.default"
