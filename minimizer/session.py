"""One minimization, start to end: the stages in order, and the report of what they did.

    check ─► pin ─► reduce ─► state ─► confirm ─► culprit      (minimizer/stages/, one module each)

``Session`` sequences the stages and owns what they share (``Runs``: workers, GPUs, caches, the log of runs);
each stage's behaviour lives in its module, testable alone. The CLI only parses options and prints.
"""

from __future__ import annotations

import dataclasses
import json
import time

from minimizer.errors import MinimizerError, ReproDoesNotFail
from minimizer.metrics import Size, list_tensor_methods_in_background, measure
from minimizer.options import Options
from minimizer.outcome import Outcome
from minimizer.files import refuse_unwritable, write_atomic
from minimizer.output import strip_header
from minimizer.progress import Progress
from minimizer.runner.run_types import RunSettings
from minimizer.runs import Runs
from minimizer.script_input import read_script
from minimizer.source.layout import format_source
from minimizer.source.script_args import bake_arguments
from minimizer.stages.backend_written import with_the_cheapest_backend
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.check import CheckReport, OracleFinding, check_original
from minimizer.stages.confirm import Confirmation, confirm_repro
from minimizer.stages.cost import cost_of, plain_costs
from minimizer.stages.operator import mending_operator, with_operator
from minimizer.stages.culprit import (
    Culprit, cheapest_backend, name_the_culprit, names_its_backend, with_backend, with_subsystem,
)
from minimizer.stages.fixed import check_fixed_release, passing_where_fixed, refuse_missing_interpreter
from minimizer.stages.pin import Pinned, Target, candidate_timeout, hold_to_one_compiled_target, pin
from minimizer.stages.reduce import reduce_script
from minimizer.stages.state import Statement, state_repro
from minimizer.time_budget import reduction_deadline, seconds_for_the_end

__all__ = ["Options", "Outcome", "ReproDoesNotFail", "Session"]

# How many plain runs of the repro the compiler bisector takes, about, one after another: where they would not fit
# in --subsystem-seconds, the culprit names the layer and the operator and says why not the subsystem.
BISECTION_RUNS = 20
# The runs of the original that finding the operator to hold may take, in seconds of the original's run time.
OPERATOR_SEARCH_SECONDS = 60.0


class Session:
    def __init__(self, options: Options, progress: Progress):
        self.progress = progress
        original = strip_header(read_script(options.script))
        self.source = bake_arguments(original, options.script.name, options.script_args)
        self.runs = Runs(options, progress, self.source, original)
        self.options = self.runs.options  # with the jobs chosen, where the user left them to us

    @property
    def only_compile(self) -> str | None:
        """The one compiled target every run compiles, once a generic assert was held to it (see ``pin``)."""

        return self.runs.only_compile

    def close(self) -> None:
        """Stop the warm workers and remove the run's compile cache."""

        self.runs.close()

    def check(self) -> CheckReport:
        """The check stage alone (``minimizer check``)."""

        return check_original(self.runs)

    def hold_to_one_compiled_target(self, pinned: OracleFinding, report: CheckReport) -> OracleFinding:
        """What ``reduce`` would hold a generic assert to (``minimizer check``); see ``stages.pin``."""

        return hold_to_one_compiled_target(self.runs, pinned, report)

    def culprit(self, finding: OracleFinding, report: CheckReport) -> Culprit:
        """The compiler layer the original's bug lives in (``minimizer check``; see ``stages.culprit``)."""

        settings = self.runs.settings((finding.spec,), candidate_timeout(self.options, report))
        compiles = any(run.used_compile for run in report.runs)
        target = Target(finding.spec, finding.bug)
        culprit = name_the_culprit(self.runs, self.source, target, settings, compiles=compiles)
        culprit = with_operator(self.runs, culprit, self.source, target, settings)
        failure = report.plain[0].failure if report.plain else None
        return self._with_subsystem(culprit, self.source, failure)

    def reduce(self) -> Outcome:
        """Check, pin, reduce, state, confirm; the repro and the report are written as they go."""

        self._refuse_unwritable_outputs()
        refuse_missing_interpreter(self.options.fixed_in)
        started, cpu_started = time.monotonic(), time.process_time()
        self.runs.candidate_log.origin = started
        listing = list_tensor_methods_in_background()  # measuring needs it; the check leaves the parent idle
        stage = self.runs.clock.stage
        with stage("check"):
            report = check_original(self.runs)
        with stage("pin"):
            pinned = pin(self.runs, report)
            check_fixed_release(self.runs, self.source, pinned.settings.limits)
        listing.join()
        best = BestSoFar(self.options, self.progress, report, pinned.target, self.source, started)
        if report.plain_failure is not None:
            limits = pinned.settings.limits
            best.watch_under_plain_python(lambda text, cancel: self.runs.plain(text, limits, cancel=cancel), report.plain_failure)
        with stage("backend and operator"):
            reducing = self._under_the_cheapest_backend(pinned, report, best)
        with stage("reduce"):
            try:
                best_text = reduce_script(self.runs, reducing, best, self._deadline(report, started))
            finally:
                best.stop_watching()
        unstated = measure(format_source(best_text))
        # What the reduction did is on disk before the repro is stated and confirmed (runs that can take minutes
        # where plain python imports slowly); the final report replaces it.
        if self.options.report:
            self._write_report(self._outcome(best, pinned.settings, cpu_started, after=unstated))
        with stage("state"):
            statement = state_repro(self.runs, best.history, best_text, pinned.target, report, pinned.settings)
        with stage("confirm"):
            confirmation = confirm_repro(self.runs, statement, pinned.target, report, best.history)
            fixed = passing_where_fixed(self.runs, best.history, confirmation.text, report, pinned.settings.limits)
            if fixed != confirmation.text:
                statement = Statement(fixed, False, pinned.settings, fixed)
                confirmation = confirm_repro(self.runs, statement, pinned.target, report, best.history)
            cost = plain_costs(report.plain, confirmation.plain, lambda: self.runs.plain_beside_the_original(
                confirmation.text, pinned.settings.limits))
        return self._finish(best, statement, confirmation, cpu_started, cost)

    def _under_the_cheapest_backend(self, pinned: Pinned, report: CheckReport, best: BestSoFar) -> Pinned:
        """How candidates run: where the script takes Inductor's default and a cheaper backend shows the same bug
        in the original (``stages.culprit.cheapest_backend``), every compiled call of a candidate uses it. The
        repro is stated and confirmed with the script's own setting (``pinned``), so it fails with that too."""

        if not self.options.cheaper_backend or not any(run.used_compile for run in report.runs):
            return pinned
        if names_its_backend(self.source) or pinned.target.spec == "hang":
            return pinned
        backend = cheapest_backend(self.runs, self.source, pinned.target, pinned.settings)
        if backend is None:
            self.progress.message("no backend cheaper than Inductor shows the bug: candidates compile as the script does")
            self._hold_to_its_operator(pinned, report)
            return pinned
        self.progress.message(f"backend={backend!r} shows the same bug: candidates compile with it, not Inductor")
        best.work.reduced_with = backend
        return dataclasses.replace(pinned, settings=with_backend(pinned.settings, backend))

    def _hold_to_its_operator(self, pinned: Pinned, report: CheckReport) -> None:
        """The bug is Inductor's: the operator whose eager kernel mends it in the original, which every step
        must keep so (``stages.operator``); none where no one operator does, or where the original runs so long
        that finding it takes over ``OPERATOR_SEARCH_SECONDS`` (a tenth of ``--max-time`` at most)."""

        run_seconds = max((run.seconds for run in report.runs), default=0.0)
        budget = OPERATOR_SEARCH_SECONDS if self.options.max_time is None else min(OPERATOR_SEARCH_SECONDS, 0.1 * self.options.max_time)
        most_rounds = int(budget // max(run_seconds, 0.1))
        self.progress.message("finding the operator whose eager kernel mends the bug (Inductor fallbacks, by halves)")
        operator = mending_operator(self.runs, self.source, pinned.target, pinned.settings, most_rounds)
        pinned.target.operator = operator
        if operator:
            self.progress.message(f"operator {operator} run eagerly mends the bug: a step that loses that is another bug")
        else:
            self.progress.message(
                f"steps are not held to one operator: none alone mends the bug (a fusion, a pass), or finding it takes "
                f"over {budget:.0f} s of runs of {run_seconds:.0f} s (the culprit names it on the repro)"
            )

    def _refuse_unwritable_outputs(self) -> None:
        """Before any run: an output that cannot be written would lose the whole reduction at its end."""

        output = self.options.output_path
        refuse_unwritable(("-o", output), ("--report", self.options.report))
        if output.resolve() == self.options.script.resolve():
            raise MinimizerError(f"-o {output} is the input script, which minimizer never modifies")

    def _deadline(self, report: CheckReport, started: float) -> float | None:
        end_seconds = seconds_for_the_end(report, self.runs.jobs, self.options.confirm)
        deadline = reduction_deadline(started, self.options.max_time, end_seconds)
        if deadline is not None:
            self.progress.message(
                f"reducing for at most {max(0.0, deadline - time.monotonic()):.0f} s: the last "
                f"{started + self.options.max_time - deadline:.0f} s of --max-time go to stating and confirming the repro"
            )
        return deadline

    def _finish(
        self,
        best: BestSoFar,
        statement: Statement,
        confirmation: Confirmation,
        cpu_started: float,
        cost: dict,
    ) -> Outcome:
        """Write the final repro and report; say where the repro falls short of what it claims."""

        fired = sum(best.target.shown_by(r, stated=statement.stated) for r in confirmation.runs)
        compares = confirmation.compares
        with self.runs.clock.stage("culprit"):
            culprit = self._culprit(confirmation, best, statement)
            rewritten = with_the_cheapest_backend(self.runs, confirmation, culprit, statement.settings)
        if rewritten is not confirmation:  # the repro as written costs what its own plain runs took
            cost = {**cost, "repro": cost_of(list(rewritten.plain))}
        confirmation = rewritten
        written = best.write(
            confirmation.text, final=True, cost=_cost_line(cost), compares=compares,
            culprit=culprit.describe() if culprit else "", fails=confirmation.in_words(best.target.spec),
        )
        outcome = self._outcome(
            best,
            statement.settings,
            cpu_started,
            after=written,
            stated_tokens=written.tokens - measure(format_source(statement.step)).tokens,
            final_fire_rate=(fired, len(confirmation.runs)),
            python={
                "fails_as_claimed": confirmation.python_fails,
                "failure": confirmation.expected,
                "runs": [r.to_json() for r in confirmation.plain],
            },
            cost=cost,
        )
        outcome.compares, outcome.culprit = compares, culprit.to_json() if culprit else {}
        self._write_report(outcome)
        if _costs_more(cost):
            self.progress.message(f"warning: the repro costs more to run than the original ({_cost_line(cost)})")
        if fired < len(confirmation.runs):
            self.progress.message(f"warning: the repro showed the bug in {fired} of {len(confirmation.runs)} confirmation runs")
        if not confirmation.python_fails:
            seen = next((run.describe() for run in confirmation.plain if run.failure != confirmation.expected), "passes")
            claimed = confirmation.expected or "a failure (it only shows the bug under minimizer's oracles)"
            raise ReproDoesNotFail(
                f"the repro in {outcome.output} does not fail under plain python as claimed "
                f"(expected {claimed}; python: {seen})"
            )
        return outcome

    def _culprit(self, confirmation: Confirmation, best: BestSoFar, statement: Statement) -> Culprit | None:
        """The layer the repro's bug lives in, unless the user asked not to (``--no-culprit``) or ``--max-time`` is
        spent (its four runs would go past it)."""

        if not self.options.culprit:
            return None
        if self.options.max_time is not None and time.monotonic() - best.started >= self.options.max_time:
            self.progress.message("culprit: not named, --max-time is spent (`minimizer check` on the repro names it)")
            return None
        compiles = any(run.used_compile for run in confirmation.runs)
        culprit = name_the_culprit(self.runs, confirmation.text, best.target, statement.settings, compiles=compiles)
        culprit = with_operator(self.runs, culprit, confirmation.text, best.target, statement.settings)
        failure = confirmation.plain[0].failure if confirmation.plain else None
        run_seconds = max((run.seconds for run in confirmation.plain), default=0.0)
        culprit = self._with_subsystem(culprit, confirmation.text, failure, best.started, run_seconds)
        self.progress.message(f"culprit: {culprit.describe()}")
        return culprit

    def _with_subsystem(
        self, culprit: Culprit, source: str, failure: str | None, started: float | None = None, run_seconds: float = 0.0
    ) -> Culprit:
        """``culprit`` with Inductor's subsystem (``stages.subsystem``) unless ``--no-subsystem``, in at most
        ``--subsystem-seconds`` and what is left of ``--max-time`` (counted from ``started``); not asked where
        its runs, of ``run_seconds`` each, would not fit."""

        if not self.options.subsystem or culprit.layer != "Inductor":
            return culprit
        seconds = self.options.subsystem_seconds
        if self.options.max_time is not None and started is not None:
            seconds = min(seconds, max(1.0, started + self.options.max_time - time.monotonic()))
        if BISECTION_RUNS * run_seconds > seconds:
            detail = (f"subsystem not named: the bisector's some {BISECTION_RUNS} runs of {run_seconds:.0f} s would take"
                      f" longer than {seconds:.0f} s (--subsystem-seconds; `minimizer check --subsystem` on the repro)")
            return dataclasses.replace(culprit, detail=detail)
        self.progress.message(f"naming Inductor's subsystem with torch's compiler bisector (at most {seconds:.0f} s)")
        folder = str(self.runs.workspace.folder)
        return with_subsystem(culprit, source, self.options.script.name, folder, failure, seconds)

    def _write_report(self, outcome: Outcome) -> None:
        if self.options.report:
            write_atomic(self.options.report, json.dumps(outcome.to_json(), indent=2) + "\n")

    def _outcome(
        self,
        best: BestSoFar,
        settings: RunSettings,
        cpu_started: float,
        *,
        after: Size,
        stated_tokens: int = 0,
        final_fire_rate: tuple[int, int] = (0, 0),
        python: dict | None = None,
        cost: dict | None = None,
    ) -> Outcome:
        """The report of this reduction as it stands: before the repro is confirmed (no ``python``), not final."""

        runs, work = self.runs, best.work
        return Outcome(
            final=python is not None,
            output=self.options.output_path,
            oracle=best.target.spec,
            bug=best.target.bug,
            before=best.before,
            after=after,
            oracle_calls=work.oracle_calls,
            cache_hits=work.cache_hits,
            screened_out=work.screened_out,
            seconds=time.monotonic() - best.started,
            parent_cpu_seconds=time.process_time() - cpu_started,
            screen_cpu_seconds=work.screen_cpu_seconds,
            accepted_steps=best.steps,
            stopped_early=work.stopped_early,
            final_fire_rate=final_fire_rate,
            passes=work.passes,
            compile_cache=runs.compile_cache,
            trajectory=best.trajectory,
            stated_tokens=stated_tokens,
            jobs=runs.jobs,
            gpus=len(runs.gpus.gpus),
            sharing=runs.sharing.to_json(),
            python=python or {},
            cost=cost or {},
            backend=runs.ray.describe() if runs.ray is not None else {"backend": "local"},
            candidates=runs.candidate_log.summary()
            | {
                "time_limit_seconds": round(runs.candidate_time_limit(settings), 1),
                "refused_for_cost": runs.refused_for_cost,
                "resident_workers": runs.residents.to_json(),
            },
            reducers=work.reducers,
            reduced_with=work.reduced_with,
            time=runs.clock.to_json(),
        )


def _cost_line(cost: dict) -> str:
    """``repro 1.2 s, 310 MB; original 9.8 s, 820 MB``."""

    def one(part: dict) -> str:
        memory = f", {part['peak_mb']:.0f} MB" if part.get("peak_mb") is not None else ""
        return f"{part['seconds']:.1f} s{memory}"

    return f"repro {one(cost['repro'])}; original {one(cost['original'])}"


def _costs_more(cost: dict) -> bool:
    """The repro's plain run markedly slower or larger than the original's (beyond what noise explains)."""

    repro, original = cost["repro"], cost["original"]
    slower = repro["seconds"] > 1.5 * original["seconds"] + 2.0
    larger = None not in (repro["peak_mb"], original["peak_mb"]) and repro["peak_mb"] > 1.5 * original["peak_mb"] + 200
    return slower or larger
