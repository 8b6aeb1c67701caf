"""Within Inductor, the operator the bug lives in: the aten operator whose lowering or decomposition, replaced by
its eager kernel (an Inductor fallback for that one operator, ``oracles.eager_ops``), makes the bug go away.

The operators tried are those of the repro's graphs before any decomposition, written down by one run with a
recording backend; then one run per operator (at once), each with only that operator run eagerly. The first in
graph order whose run completes without the bug names it. None does where the bug needs two operators together
(a fusion), or lives in no operator's lowering (a pass, the scheduler): the culprit then names no operator.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from typing import TYPE_CHECKING

from minimizer.stages.culprit import Culprit, with_backend
from oracles.eager_ops import EAGER_OPS_VARIABLE, RECORD_OPS_VARIABLE, read_operators
from oracles.forced_backend import RECORDING_OPERATORS

if TYPE_CHECKING:
    from minimizer.runner.run_types import RunSettings
    from minimizer.runs import Runs
    from minimizer.stages.pin import Target

# Operators tried at most: a repro's graphs hold a few; a larger graph is a slower question, not a better one.
_MOST_OPERATORS = 12


def with_operator(runs: Runs, culprit: Culprit, text: str, target: Target, settings: RunSettings) -> Culprit:
    """``culprit`` with the operator its bug lives in, where the ladder named Inductor and one operator run eagerly
    mends it; else as it is."""

    if culprit.layer != "Inductor":
        return culprit
    operators = recorded_operators(runs, text, settings)[:_MOST_OPERATORS]
    if not operators:
        return culprit
    results = runs.call_all([lambda op=op: runs.run(text, _eagerly(settings, op)) for op in operators])
    mended = [op for op, result in zip(operators, results) if result.completed and not target.shown_by(result)]
    return dataclasses.replace(culprit, operator=mended[0]) if mended else culprit


def recorded_operators(runs: Runs, text: str, settings: RunSettings) -> list[str]:
    """The aten operators of ``text``'s graphs before decomposition, in graph order, from one recording run."""

    with tempfile.TemporaryDirectory(prefix="minimizer-operators-") as folder:
        path = os.path.join(folder, "operators.jsonl")
        recording = with_backend(settings, RECORDING_OPERATORS)
        runs.run(text, dataclasses.replace(recording, env=(*recording.env, (RECORD_OPS_VARIABLE, path))))
        return read_operators(path)


def _eagerly(settings: RunSettings, operator: str) -> RunSettings:
    inductor = with_backend(settings, "inductor")
    return dataclasses.replace(inductor, env=(*inductor.env, (EAGER_OPS_VARIABLE, operator)))
