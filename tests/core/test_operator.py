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
    """Runs answered by the operator each run leaves to eager: the bug goes where ``mends`` is eager."""

    def __init__(self, operators: list[str], mends: str | None):
        self.operators, self.mends, self.asked = operators, mends, []

    def run(self, text, settings):
        env = dict(settings.env)
        if RECORD_OPS_VARIABLE in env:
            with open(env[RECORD_OPS_VARIABLE], "w") as out:
                out.write(__import__("json").dumps(self.operators) + "\n")
            return RunResult(seconds=0.0, verdicts={"numerical": Verdict(False)})
        eager = env.get(EAGER_OPS_VARIABLE)
        self.asked.append(eager)
        fires = eager != self.mends
        return RunResult(seconds=0.0, verdicts={"numerical": Verdict(fires, "numerical: float32 value" if fires else "")})

    def call_all(self, calls):
        return [call() for call in calls]


SETTINGS = RunSettings("repro.py", ".", ("numerical",), Limits(timeout=30))
TARGET = Target("numerical", "numerical: float32 value")
INDUCTOR = Culprit("Inductor", "inductor", [("eager", False), ("inductor", True)])


def test_the_operator_is_the_first_that_run_eagerly_mends_the_bug():
    runs = _Runs(["aten.add.Tensor", "aten.remainder.Tensor", "aten.mul.Tensor"], mends="aten.remainder.Tensor")
    culprit = with_operator(runs, INDUCTOR, "text", TARGET, SETTINGS)
    assert culprit.operator == "aten.remainder.Tensor"
    assert culprit.describe().startswith("Inductor, operator aten.remainder.Tensor (eager no")
    assert runs.asked == ["aten.add.Tensor", "aten.remainder.Tensor", "aten.mul.Tensor"]


def test_no_operator_is_named_where_none_alone_mends_it_or_the_layer_is_not_inductors():
    assert with_operator(_Runs(["aten.add.Tensor"], mends=None), INDUCTOR, "text", TARGET, SETTINGS).operator == ""
    dynamo = dataclasses.replace(INDUCTOR, layer="Dynamo")
    runs = _Runs(["aten.add.Tensor"], mends="aten.add.Tensor")
    assert with_operator(runs, dynamo, "text", TARGET, SETTINGS) == dynamo and runs.asked == []


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
