"""Within Inductor, the operator the bug lives in: the aten operator whose lowering or decomposition, replaced by
its eager kernel (an Inductor fallback for that one operator, ``oracles.eager_ops``), makes the bug go away.

The operators tried are those of the program's graphs before any decomposition, written down by one run with a
recording backend. One run with all of them eager says whether any operator's lowering is the bug at all; then
halves, both at once, keep the first half (in graph order) whose operators run eagerly mend it, down to one;
on the repro, every half that mends, down to each operator that does alone. None is named where the bug needs operators of both halves together (a fusion), or lives in no operator's
lowering (a pass, the scheduler).

The operator is part of the bug: found on the original before the reduction where the bug is known to be
Inductor's, every step must keep it the operator that mends the bug (``Target.operator``), so that a step which
swaps it for another (``div`` with ``rounding_mode="trunc"`` for ``div`` then a cast) is another bug, refused.
"""

from __future__ import annotations

import dataclasses
import math
import os
import tempfile
from typing import TYPE_CHECKING

from minimizer.runner.run_types import RunSettings, mended_with_operators_eager
from minimizer.stages.culprit import Culprit, with_backend
from oracles.eager_ops import RECORD_OPS_VARIABLE, read_operators
from oracles.forced_backend import RECORDING_OPERATORS

if TYPE_CHECKING:
    from minimizer.runs import Runs
    from minimizer.stages.pin import Target


def with_operator(runs: Runs, culprit: Culprit, text: str, target: Target, settings: RunSettings) -> Culprit:
    """``culprit`` with the operator its bug lives in, where the ladder named Inductor and operators run eagerly
    mend it; else as it is. Where several do, each alone, the bug is in the kernel they are fused into: the one
    nearest the outputs (last in graph order: the others' fallbacks mend it by taking their values out of that
    kernel) is named, the others beside it (``Culprit.fused``)."""

    if culprit.layer != "Inductor":
        return culprit
    inductor = with_backend(settings, "inductor")
    found = mending_operators(runs, text, target, inductor)
    if not found:
        return culprit
    return dataclasses.replace(culprit, operator=found[-1], fused=tuple(found[:-1]))


def mending_operator(
    runs: Runs, text: str, target: Target, settings: RunSettings, most_rounds: int | None = None
) -> str:
    """The first operator of ``text``'s graphs that, run eagerly, makes ``target``'s bug go away ("" where none
    alone does), by halving the operators recorded; "" also where the halving would take more than
    ``most_rounds`` rounds of runs (one run, or both halves at once)."""

    operators = recorded_operators(runs, text, settings)
    if most_rounds is not None and search_rounds(len(operators), runs.jobs) > most_rounds:
        return ""
    if not operators or not _mended(runs, text, target, settings, operators):
        return ""
    while len(operators) > 1:
        halves = operators[: len(operators) // 2], operators[len(operators) // 2 :]
        answers = runs.call_all([lambda half=half: _mended(runs, text, target, settings, half) for half in halves])
        chosen = next((half for half, mended in zip(halves, answers) if mended), None)
        if chosen is None:
            return ""  # the bug needs operators of both halves: no one operator's lowering
        operators = chosen
    return operators[0]


def mending_operators(runs: Runs, text: str, target: Target, settings: RunSettings) -> list[str]:
    """Every operator of ``text``'s graphs that, run eagerly on its own, makes ``target``'s bug go away, in graph
    order: the halving of ``mending_operator``, into each half that mends."""

    operators = recorded_operators(runs, text, settings)
    if not operators or not _mended(runs, text, target, settings, operators):
        return []
    found: list[str] = []
    mending = [operators]
    while mending:
        groups = [half for group in mending for half in (group[: len(group) // 2], group[len(group) // 2 :])]
        answers = runs.call_all([lambda half=half: _mended(runs, text, target, settings, half) for half in groups])
        found += [group[0] for group, mended in zip(groups, answers) if mended and len(group) == 1]
        mending = [group for group, mended in zip(groups, answers) if mended and len(group) > 1]
    return sorted(found, key=operators.index)


def search_rounds(operators: int, jobs: int) -> int:
    """Rounds of runs the halving of ``operators`` takes: one with all of them eager, then one per level (two
    where the halves cannot run at once)."""

    levels = max(0, math.ceil(math.log2(operators))) if operators else 0
    return 1 + levels * (1 if jobs > 1 else 2)


def recorded_operators(runs: Runs, text: str, settings: RunSettings) -> list[str]:
    """The aten operators of ``text``'s graphs before decomposition, in graph order, from one recording run."""

    with tempfile.TemporaryDirectory(prefix="minimizer-operators-") as folder:
        path = os.path.join(folder, "operators.jsonl")
        recording = with_backend(settings, RECORDING_OPERATORS)
        runs.run(text, dataclasses.replace(recording, env=(*recording.env, (RECORD_OPS_VARIABLE, path))))
        return read_operators(path)


def _mended(runs: Runs, text: str, target: Target, settings: RunSettings, operators: list[str]) -> bool:
    return mended_with_operators_eager(runs.run, text, settings, operators, target.shown_by) is True
