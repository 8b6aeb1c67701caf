"""Stage 2, pin: the bug every candidate must show (an oracle and its signature), and how candidates run.

The check found an oracle that fires steadily; pinning refuses what cannot be reduced faithfully (``diagnose``),
holds a generic assert to the one compiled call that fails it alone, and decides what a candidate must keep (the
script's own failure, where the bug cannot be stated) and how long it may run.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from minimizer.errors import MinimizerError
from minimizer.interestingness import shows_bug
from minimizer.options import CANDIDATE_TIMEOUT_FACTOR, MIN_CANDIDATE_TIMEOUT, Options
from minimizer.reduce.keys import candidate_key
from minimizer.runner.run_types import DID_NOT_FINISH, RunResult, RunSettings
from minimizer.source.statement import has_place, stated_at_the_compiled_call
from minimizer.stages.cost import CostBound
from minimizer.stages.check import CheckReport, OracleFinding, diagnose
from oracles.harness import ONLY_OUTPUT
from oracles.bug import ALSO_WITHOUT_COMPILE, ONLY_UNDER_COMPILE, Bug, same_bug

if TYPE_CHECKING:
    from minimizer.runs import Runs

# How many compiled targets are tried alone (confirm runs each) to hold a generic assert to one of them.
_MOST_TARGETS_TRIED_ALONE = 6


@dataclass
class Target:
    """The bug every candidate must show: an oracle and the bug it found (``oracles.bug``; the text of a
    plug-in's signature stands for a bug of that failure).

    ``own_failure``: how the original ended under plain python (its own check failing). A candidate whose
    compiled call no statement can reach (see ``StatementPlace``) must still end so: the bug could not be stated
    in its repro, which would then fail under plain python only if its own check still did.

    ``by_a_check``: the original failed by a check of its own in every run (an ``assert``, ``if not ok: raise``,
    ``sys.exit(1)``), not by something raising: a lifted comparison of the compiled call can stand for it.

    ``operator``: within Inductor, the aten operator whose eager kernel makes the bug go away (``stages.operator``);
    a candidate shows this bug only where that still holds (``runner.run_types.mended_with_operators_eager``).
    """

    spec: str
    bug: Bug
    own_failure: str | None = None
    by_a_check: bool = False
    operator: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.bug, str):
            self.bug = Bug(self.bug)

    @property
    def signature(self) -> str:
        return self.bug.signature

    def shown_by(self, result: RunResult, *, stated: bool = False, text: str | None = None) -> bool:
        """Whether a run shows this bug (``stated``: by a repro that states it, see ``shows_bug``); with the
        candidate's ``text``, also that it keeps the script's own failure where it must."""

        if not shows_bug(result, self.spec, self.bug, stated=stated):
            return False
        if stated or text is None or self.own_failure is None or result.failure == self.own_failure:
            return True
        return has_place(text)


@dataclass
class Pinned:
    """What the pin stage hands on: the bug, and the settings every candidate runs with."""

    target: Target
    settings: RunSettings


def pin(runs: Runs, report: CheckReport) -> Pinned:
    """The bug to reduce against and how candidates run, or a one-line ``MinimizerError`` saying why there is
    nothing to reduce."""

    problem = diagnose(report, explicit_oracle=runs.options.oracle != "auto")
    if problem is not None:
        raise MinimizerError(problem)
    finding = report.pinned
    assert finding is not None
    counts = [run.operators_captured for run in report.runs if run.completed]
    runs.operators_captured[candidate_key(runs.source)] = None if None in counts or not counts else max(counts)
    runs.progress.message(f"pinned oracle {finding.spec}: {finding.signature}")
    if len(runs.gpus.gpus) > 1:
        runs.progress.message(f"{runs.jobs} candidate(s) at once over {len(runs.gpus.gpus)} GPUs, each on the least busy one")
    timeout = _time_limit(runs, finding, report)
    # A bug that needs eager to fail (the reverse crash, a failure that is not the compiler's) is where the eager
    # pre-check must not reject candidates.
    bug = finding.bug
    precheck = not (bug.raised_by == "eager" or bug.under_compile == ALSO_WITHOUT_COMPILE)
    finding = hold_to_one_compiled_target(runs, finding, report)
    settings = dataclasses.replace(runs.settings((finding.spec,), timeout), eager_precheck=precheck)
    target = Target(finding.spec, finding.bug, own_failure_to_keep(report, finding), _by_a_check(report))
    runs.cost_bound = CostBound.of(report.runs)
    if target.own_failure is not None and not has_place(runs.source):
        runs.progress.message(
            "no statement can reach the compiled call to state the bug: candidates keep the script's own failure "
            f"({target.own_failure}) until one can"
        )
    return Pinned(target, settings)


def candidate_timeout(options: Options, report: CheckReport) -> float:
    """A candidate's time limit: the user's, else a multiple of the original's slowest run."""

    return options.timeout or max(
        MIN_CANDIDATE_TIMEOUT, CANDIDATE_TIMEOUT_FACTOR * max(r.seconds for r in report.runs) + 10
    )


def _time_limit(runs: Runs, finding: OracleFinding, report: CheckReport) -> float:
    """The candidates' first time limit. Unless the user set it, or the bug is a hang (shown by running into the
    limit), the candidates' own run times take over once there are enough of them (``CandidateLog.time_limit``)."""

    runs.adapt_time_limit = not runs.options.timeout and finding.spec != "hang"
    if finding.spec != "hang":
        return candidate_timeout(runs.options, report)
    # A candidate shows the hang by not finishing within the limit the original did not finish within.
    timeout = max(r.seconds for r in report.runs)
    runs.progress.message(f"every candidate that still hangs takes {timeout:.0f} s; a smaller --timeout makes this faster")
    return timeout


def _by_a_check(report: CheckReport) -> bool:
    """Whether every oracle run of the original ended with a check of the script's own failing."""

    return bool(report.runs) and all(run.exception is not None and run.exception.check for run in report.runs)


def own_failure_to_keep(report: CheckReport, pinned: OracleFinding) -> str | None:
    """The original's failure under plain python, where candidates may have to keep it (see ``Target``): for a
    bug that can be stated, when every plain run and every oracle run ended with the same failure."""

    if not stated_at_the_compiled_call(pinned.spec, pinned.bug):
        return None  # a crash is its failure; the in-place check has a place in every script
    failure = report.plain_failure
    if failure is None or failure == DID_NOT_FINISH or failure.startswith("killed by"):
        return None
    return failure if all(run.failure == failure for run in report.runs) else None


def hold_to_one_compiled_target(runs: Runs, pinned: OracleFinding, report: CheckReport) -> OracleFinding:
    """A generic assert (nothing it reads names what failed) over compiled calls: hold the reduction to the
    first target that, compiled alone with the others run eagerly, fails the assert the same way in every
    run; then, where that target returns several tensors (a function computing several losses), to the first
    of them that alone, taken from the compiled call with the others from its eager twin, still does. A
    candidate whose assert fails because another compiled call, or another output of the same call,
    misbehaves (a parity check over several losses, say) is then not the same bug. ``pinned`` unchanged if
    nothing fails it alone."""

    bug = pinned.bug
    generic = bug.is_assertion and bug.operands is None
    targets = report.runs[0].compiled_targets if report.runs else []
    if pinned.spec != "script" or not generic or bug.under_compile != ONLY_UNDER_COMPILE or not targets:
        return pinned
    runs.progress.message(
        f"the assert reads nothing that names what failed, over {len(targets)} compiled target(s): "
        "finding the compiled call, and the output of it, that fails it alone"
    )
    held = _first_failing_alone(runs, targets, bug, report)
    if held is None:
        runs.progress.message("no compiled target fails the assert alone: reducing with every target compiled")
        return pinned
    name, finding, results = held
    outputs = results[0].compiled_outputs
    if len(outputs) > 1:
        each_output = [f"{name}{ONLY_OUTPUT}{path}" for path in outputs]
        narrowed = _first_failing_alone(runs, each_output, bug, report)
        if narrowed is not None:
            name, finding, _ = narrowed
    if len(targets) == 1 and ONLY_OUTPUT not in name:
        return pinned  # compiling the one target alone is what every run does: nothing to hold to
    runs.only_compile = name
    runs.progress.message(
        f"the assert fails with only {name} compiled: every candidate runs so, and the reduction cannot slip "
        "to another compiled call's or output's mismatch"
    )
    return finding


def _first_failing_alone(
    runs: Runs, choices: list[str], pinned: Bug, report: CheckReport
) -> tuple[str, OracleFinding, list[RunResult]] | None:
    """The first of ``choices`` (``only_compile`` values, see Harness) with which the script oracle, over the
    check's seeds, fails steadily with the ``pinned`` bug held to it; its finding and runs."""

    settings = runs.settings(("script",), candidate_timeout(runs.options, report))
    for only_compile in choices[:_MOST_TARGETS_TRIED_ALONE]:
        alone = dataclasses.replace(settings, only_compile=only_compile)
        results = runs.call_all(
            [lambda seed=seed: runs.run(runs.source, dataclasses.replace(alone, seed=seed)) for seed in report.seeds]
        )
        finding = OracleFinding("script", [run.verdict("script") for run in results])
        if finding.steady and same_bug(pinned.with_(only_compile=only_compile), finding.bug):
            return only_compile, finding, results
    return None
