"""Stage 6, confirm: the repro runs ``--confirm`` times under the oracles and as often under plain python.

Where either falls short, the repro gets the harness's seeds in its own text (plain python then draws the
numbers the oracles saw); where a script-oracle repro's failure under plain python is not steady, the latest step
that fails steadily takes its place (rule 3 of ``stages.state``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minimizer.runner.plain import PlainRun
from minimizer.runner.run_types import RunResult, RunSettings
from minimizer.source.statement import seed_like_the_harness, seeds_random_numbers
from minimizer.stages.check import CheckReport
from minimizer.stages.pin import Target
from minimizer.stages.state import Statement, latest_step_python_fails

if TYPE_CHECKING:
    from minimizer.runs import Runs

# Oracles whose failure can depend on the numbers drawn (a crash or a lost requires_grad rarely does).
_VALUE_ORACLES = frozenset({"numerical", "gradient"})


@dataclass
class Confirmation:
    """The repro as confirmed, its runs under the oracles and under plain python."""

    text: str
    runs: list[RunResult]
    plain: list[PlainRun]

    @property
    def expected(self) -> str | None:
        """The failure the first oracle run ended with: what the repro claims."""

        return self.runs[0].failure if self.runs else None

    @property
    def compares(self) -> str:
        """What the repro's failing check compares, as the first run that told recorded it (``""``: none told)."""

        return next((r.exception.evidence_detail for r in self.runs if r.exception and r.exception.evidence_detail), "")

    def in_words(self, oracle: str) -> str:
        """What fails, in words, as the repro's first confirmation run found it (its own figures, not the
        original's); "" where no run found it."""

        found = [run.verdict(oracle).found for run in self.runs if run.verdict(oracle).fires]
        return found[0].in_words() if found else ""

    @property
    def python_fails(self) -> bool:
        """Every plain run failed with the claimed failure."""

        return self.expected is not None and all(run.failure == self.expected for run in self.plain)


def confirm_repro(
    runs: Runs, statement: Statement, target: Target, report: CheckReport, history: list[str]
) -> Confirmation:
    """``statement``'s repro confirmed (seeded where that makes it confirm), or an earlier step of ``history``
    where a script-oracle repro's failure under plain python was not steady."""

    settings, stated = statement.settings, statement.stated
    confirmation = Confirmation(*_confirm(runs, statement.text, target, settings, stated))
    if confirmation.python_fails or stated or target.spec != "script":
        return confirmation
    runs.progress.message("the repro does not fail steadily under plain python: looking for the latest step that does")
    times = max(3, runs.options.confirm)
    steady = latest_step_python_fails(runs, history, confirmation.text, report, settings, times=times)
    if steady == confirmation.text:
        return confirmation
    return Confirmation(*_confirm(runs, steady, target, settings, stated))


def may_depend_on_the_draw(target: Target) -> bool:
    """Whether the bug is about values, which other random numbers can move across a tolerance. A crash, or the
    script raising anything but a failed assert, is about what runs, not about the numbers."""

    if target.spec == "script":
        return target.bug.is_assertion
    return target.spec in _VALUE_ORACLES


def _confirmed(target: Target, stated: bool, confirmations: list[RunResult], plain: list[PlainRun]) -> bool:
    """Every oracle run showed the bug with the same failure, and every plain run failed with it too."""

    confirmation = Confirmation("", confirmations, plain)
    return (
        confirmation.python_fails
        and all(target.shown_by(r, stated=stated) for r in confirmations)
        and all(r.failure == confirmation.expected for r in confirmations)
    )


def _confirm(
    runs: Runs, text: str, target: Target, settings: RunSettings, stated: bool
) -> tuple[str, list[RunResult], list[PlainRun]]:
    """Run the repro ``confirm`` times under the oracles (seeds varied) and under plain python. If either
    falls short, the repro gets the harness's seeds in its own text and is confirmed again under the fixed
    seed, so plain python draws the numbers the oracles saw. A script that seeded its generators gets a
    seeded repro first. Returns the text and both sets of runs."""

    times = max(1, runs.options.confirm)
    runs.progress.message(f"confirming the repro {times} time(s) under the oracles and under plain python")
    seeded = seed_like_the_harness(text, settings.seed, settings.origin_dir)
    if seeded != text and may_depend_on_the_draw(target) and seeds_random_numbers(runs.source):
        # The user's script was deterministic; a repro whose failure may depend on the draw must be too, and
        # a few passing confirmations of an unseeded one would not show that it is.
        seeded_runs, seeded_plain = _confirm_runs(runs, seeded, target, settings, [settings.seed] * times)
        if _confirmed(target, stated, seeded_runs, seeded_plain):
            return seeded, seeded_runs, seeded_plain
    confirmations, plain = _confirm_runs(runs, text, target, settings, [settings.seed + i for i in range(times)])
    if _confirmed(target, stated, confirmations, plain):
        return text, confirmations, plain
    if seeded == text:
        return text, confirmations, plain
    runs.progress.message("the repro did not confirm: trying it with the random numbers seeded as the oracles did")
    seeded_runs, seeded_plain = _confirm_runs(runs, seeded, target, settings, [settings.seed] * times)
    if _confirmed(target, stated, seeded_runs, seeded_plain):
        return seeded, seeded_runs, seeded_plain
    return text, confirmations, plain


def _confirm_runs(
    runs: Runs, text: str, target: Target, settings: RunSettings, seeds: list[int]
) -> tuple[list[RunResult], list[PlainRun]]:
    calls = [(lambda seed=seed: runs.run(text, dataclasses.replace(settings, seed=seed))) for seed in seeds]
    calls += [lambda: runs.plain(text, settings.limits) for _ in seeds]
    done = runs.call_all(calls)
    return done[: len(seeds)], done[len(seeds) :]

