"""Stage 5, state: which step becomes the repro, and whether it states the bug as plain code.

A repro must fail under plain ``python repro.py`` with the failure it claims; a silent bug (a wrong value, a
lost ``requires_grad``, an in-place write) fails there only once an ``assert`` at its end states it. One rule
picks the repro, cheapest claim first (``state_repro``):

1. the reduced script, with the bug stated as an assert at its end;
2. where no statement can reach its compiled call (it sits inside a function, say), the latest of a few earlier
   steps where one can: a repro that plain python fails beats a smaller one that needs minimizer to show its bug;
3. where no step can state it, the latest step that plain python still fails as it failed the original (the
   script's own check).

A bug pinned by the script's own check is already its own statement: it takes rule 1 or stays as it is, and
the confirm stage falls back to rule 3 where the repro's failure is not steady.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable

from minimizer.runner.run_types import RunSettings
from minimizer.source.statement import can_be_stated, state_bug
from minimizer.stages.check import CheckReport
from minimizer.stages.pin import Target

if TYPE_CHECKING:
    from minimizer.runs import Runs

# How many earlier steps are tried (each a run) when the bug cannot be stated in the best repro.
_EARLIER_STEPS_TO_STATE = 3
# Steps from the end tried one by one before bisecting, when looking for one that fails steadily.
_STEPS_TRIED_FIRST = 6


@dataclass
class Statement:
    """The repro the rule chose; ``stated``: its bug is stated as plain code; how it runs from now on; ``step``:
    the reduction's step it was made from (the best one, or an earlier one where the best had no place)."""

    text: str
    stated: bool
    settings: RunSettings
    step: str


def state_repro(
    runs: Runs, history: list[str], best_text: str, target: Target, report: CheckReport, settings: RunSettings
) -> Statement:
    """The repro by the rule above, from ``best_text`` and the steps before it (``history``, oldest first)."""

    text, stated = state_the_bug(runs, best_text, target, settings)
    step = best_text
    if not stated and can_be_stated(target.spec, target.bug):
        text, stated, step = state_an_earlier_step(runs, history, text, target, settings)
    if not stated and target.spec != "script":
        text = step = latest_step_python_fails(runs, history, text, report, settings)
    return Statement(text, stated, stated_settings(settings, target) if stated else settings, step)


def stated_settings(settings: RunSettings, target: Target) -> RunSettings:
    """How a repro that states the bug runs: the pinned oracle and ``script``, which must see it fail alone."""

    return dataclasses.replace(settings, oracles=(target.spec, "script"), eager_precheck=False)


def state_the_bug(runs: Runs, text: str, pinned: Target, settings: RunSettings) -> tuple[str, bool]:
    """``text`` with the bug stated as an ``assert`` at its end, if that still shows the same bug and fails
    when run with plain ``python``; else ``text`` unchanged (the harness still sees the bug). The flag says
    which."""

    versions = state_bug(text, pinned.spec, pinned.bug)
    check = stated_settings(settings, pinned)
    for stated in versions:
        if pinned.shown_by(runs.run(stated, check), stated=True):
            runs.progress.message("stated the bug as an assert at the end of the repro")
            return stated, True
    if versions:
        runs.progress.message("could not state the bug as plain code; the repro shows it only under minimizer")
    return text, False


def state_an_earlier_step(
    runs: Runs, history: list[str], best_text: str, target: Target, settings: RunSettings
) -> tuple[str, bool, str]:
    """When the bug cannot be stated in the best repro (its compiled call now sits where no statement can
    reach it), the latest of a few earlier steps where it can: a repro that plain python fails beats a
    smaller one that needs minimizer to show its bug. Returns the text, whether it is stated, and its step."""

    tried = 0
    for earlier in reversed(history[:-1]):
        if tried == _EARLIER_STEPS_TO_STATE:
            break
        if earlier == best_text or not state_bug(earlier, target.spec, target.bug):
            continue  # free: nothing to run where no statement can be written
        tried += 1
        text, stated = state_the_bug(runs, earlier, target, settings)
        if stated:
            runs.progress.message("stated the bug in an earlier, larger step: the last one had no place for it")
            return text, True, earlier
    return best_text, False, best_text


def latest_step_python_fails(
    runs: Runs, history: list[str], best_text: str, report: CheckReport, settings: RunSettings, times: int = 1
) -> str:
    """Where no step could state the bug, or the repro's failure under plain python was not steady, the
    latest step that plain python still fails as it failed the original (the script's own check) in each of
    ``times`` runs, found by bisecting the steps (the original itself if no later step does); ``best_text``
    if it fails so already, or if the original did not fail steadily under plain python.

    Steps lose the script's failure for good once its check goes, so the steps that keep it come first; a
    step whose failure hangs on memory nothing wrote (a kernel reading past its tensors) fails now and then,
    and ``times`` runs of each probe tell it apart; the step returned has been seen to fail in all of them."""

    failures = {run.failure for run in report.plain}
    if len(failures) != 1 or None in failures:
        return best_text
    failure = failures.pop()

    def fails(text: str) -> bool:
        calls = [lambda: runs.plain(text, settings.limits) for _ in range(times)]
        return all(run.failure == failure for run in runs.call_all(calls))

    if fails(best_text):
        return best_text
    low, high = 0, len(history) - 1  # history[low] fails (the original); history[high] is known not to
    if history[high] != best_text:
        high += 1
    if times > 1:
        # A step that fails only now and then (its failure hangs on memory nothing wrote) comes late, from
        # shrinking a size, and later steps may fail steadily again: the last few go first, one by one.
        for step in range(high - 1, max(low, high - 1 - _STEPS_TRIED_FIRST), -1):
            if fails(history[step]):
                low = high = step
                break
    low = latest_step_that(fails, history, low, high)
    kind = failure.split(": ", 1)[0]
    runs.progress.message(
        f"keeping the latest step plain python fails as it failed the original ({kind}): step {low} of "
        f"{len(history) - 1}"
        if low
        else f"no step but the original fails under plain python as it did ({kind}): keeping the original"
    )
    return history[low]


def latest_step_that(holds: Callable[[str], bool], history: list[str], low: int, high: int) -> int:
    """The latest index between ``low`` (whose step holds) and ``high`` (whose step does not, or the end) whose
    step ``holds``, bisected: steps hold up to some point and not after it."""

    while high - low > 1:
        middle = (low + high) // 2
        if holds(history[middle]):
            low = middle
        else:
            high = middle
    return low
