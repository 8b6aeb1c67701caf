"""One minimization, start to end: check the original, pin the bug, reduce, confirm, write the results.

Behaviour lives here so that it is testable without the CLI; the CLI only parses options and prints.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Protocol

from minimizer.candidate_log import CandidateLog
from minimizer.check import CheckReport, OracleFinding, diagnose
from minimizer.errors import MinimizerError
from minimizer.interestingness import shows_bug
from minimizer.metrics import Size, code_tokens, count_tokens, list_tensor_methods_in_background, measure
from minimizer.output import ReproInfo, default_output_path, render_repro, strip_header, write_atomic
from minimizer.reduce.scheduler import OutOfTime, Reducer
from minimizer.reduce.tester import Tester, speculation_for
from minimizer.runner.plain import PlainRun, run_plain
from minimizer.runner.process import (
    DID_NOT_FINISH,
    CompileCacheStats,
    Launcher,
    Limits,
    RunResult,
    RunSettings,
    allow_candidates,
    kill_all_candidates,
    run_candidate,
)
from minimizer.runner.gpus import GpuPool, default_jobs, visible_gpus
from minimizer.runner.shared_verdicts import SharingPayoff
from minimizer.runner.warm import ForkServerLauncher
from minimizer.runner.workspace import Workspace
from minimizer.script_input import read_script
from minimizer.source.layout import format_source
from minimizer.source.statement import (
    StatementPlace,
    can_be_stated,
    has_place,
    seed_like_the_harness,
    seeds_random_numbers,
    state_bug,
    stated_at_the_compiled_call,
)
from minimizer.time_budget import reduction_deadline, seconds_for_the_end
from oracles.api import NEEDS_CALLS
from oracles.harness import ONLY_OUTPUT
from oracles.script import ALSO_WITHOUT_COMPILE, ONLY_UNDER_COMPILE, only_compiled
from oracles.registry import AUTO_PRIORITY, OracleNotFound, canonical_spec, load_oracle

# How many compiled targets are tried alone (confirm runs each) to hold a generic assert to one of them.
_MOST_TARGETS_TRIED_ALONE = 6
# How many earlier steps are tried (each a run) when the bug cannot be stated in the best repro.
_EARLIER_STEPS_TO_STATE = 3
# Oracles whose failure can depend on the numbers drawn (a crash or a lost requires_grad rarely does).
_VALUE_ORACLES = frozenset({"numerical", "gradient"})
# The original may compile for a long time; candidates get a limit derived from how long the original took.
ORIGINAL_TIMEOUT = 600.0
MIN_CANDIDATE_TIMEOUT = 30.0
CANDIDATE_TIMEOUT_FACTOR = 3.0


@dataclass
class Options:
    script: Path
    output: Path | None = None
    report: Path | None = None
    oracle: str = "auto"
    timeout: float | None = None
    memory_mb: int = 8000
    jobs: int | None = 1  # None: chosen from the host's cores and GPUs (minimizer.runner.gpus.default_jobs)
    confirm: int = 2
    max_time: float | None = None
    seed: int = 0
    cold: bool = False  # a fresh interpreter per candidate instead of forks of a warm server
    reducer: str = "auto"  # "source", "graph", or "auto": source, then graph where the model lives elsewhere
    share_verdicts: bool = True  # candidates whose compiled calls will be the same share a verdict
    ray: str | None = None  # run candidates as Ray tasks: "local", an address, or "auto" (RAY_ADDRESS)

    @property
    def output_path(self) -> Path:
        return self.output or default_output_path(self.script)


@dataclass
class Outcome:
    output: Path
    oracle: str
    signature: str
    before: Size
    after: Size
    oracle_calls: int
    cache_hits: int
    screened_out: int
    seconds: float
    accepted_steps: int
    stopped_early: bool
    final_fire_rate: tuple[int, int]
    passes: list[dict] = field(default_factory=list)
    compile_cache: CompileCacheStats = field(default_factory=CompileCacheStats)
    # One point per step that made the best repro smaller: what it cost to get that small.
    trajectory: list[dict] = field(default_factory=list)
    # Tokens that stating the bug at the end (see minimizer.source.statement) added to the repro.
    stated_tokens: int = 0
    jobs: int = 1
    gpus: int = 0  # GPUs the candidates were spread over (see minimizer.runner.gpus)
    sharing: dict = field(default_factory=dict)
    # CPU seconds of minimizer's own process (proposing, screening, scheduling), the candidates' not counted.
    parent_cpu_seconds: float = 0.0
    # CPU seconds of the helper processes that screened candidates for the parent (-j above 1).
    screen_cpu_seconds: float = 0.0
    # The repro under plain python: whether every run failed as the oracles' runs did, and the runs.
    python: dict = field(default_factory=dict)
    # Where candidates ran: {"backend": "local"} or Ray's {"backend": "ray", "nodes", "cpus", "gpus"}.
    backend: dict = field(default_factory=lambda: {"backend": "local"})
    # What the candidates' runs cost (see minimizer.candidate_log).
    candidates: dict = field(default_factory=dict)
    # False in the report written as the reduction stops, before the repro is stated and confirmed.
    final: bool = True

    def to_json(self) -> dict:
        return {
            "final": self.final,
            "output": str(self.output),
            "oracle": self.oracle,
            "signature": self.signature,
            "oracle_calls": self.oracle_calls,
            "cache_hits": self.cache_hits,
            "screened_out": self.screened_out,
            "seconds": round(self.seconds, 2),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
            "accepted_steps": self.accepted_steps,
            "stopped_early": self.stopped_early,
            "final_confirmations": {"fired": self.final_fire_rate[0], "runs": self.final_fire_rate[1]},
            "compile_cache": self.compile_cache.to_json(),
            "passes": self.passes,
            "trajectory": self.trajectory,
            "stated_tokens": self.stated_tokens,
            "jobs": self.jobs,
            "gpus": self.gpus,
            "sharing": self.sharing,
            "parent_cpu_seconds": round(self.parent_cpu_seconds, 2),
            "screen_cpu_seconds": round(self.screen_cpu_seconds, 2),
            **self.backend,
            "python": self.python,
            "candidates": self.candidates,
        }


class Progress(Protocol):
    def message(self, text: str) -> None: ...
    def reduction_started(self, size: int) -> None: ...
    def pass_started(self, name: str) -> None: ...
    def accepted(self, text: str, size: int, pass_name: str) -> None: ...
    def tested(self, interesting: bool, cached: bool) -> None: ...


def candidate_key(text: str) -> str:
    """Cache key: the code tokens, so comments and layout don't cost an oracle call."""

    try:
        return " ".join(code_tokens(text))
    except Exception:  # tokenize errors: fall back to the text itself
        return text


def short_key(text: str) -> str:
    """A short hash of ``candidate_key(text)``: names a candidate in the report's timeline."""

    return hashlib.sha1(candidate_key(text).encode()).hexdigest()[:12]


class Session:
    def __init__(self, options: Options, progress: Progress):
        allow_candidates()  # an earlier run in this process may have been stopped
        self.options = options
        self.progress = progress
        self.source = strip_header(read_script(options.script))
        self.origin_dir = str(options.script.resolve().parent)
        # The files beside the script, as every run sees them (the script itself and our output left out).
        self.workspace = Workspace(
            Path(self.origin_dir), leave_out={options.script.name, self.options.output_path.name}
        )
        self.ray = None
        if options.ray:
            from minimizer.runner.ray_backend import RayBackend

            self.ray = RayBackend(options.ray)
        self.launcher: Launcher | None = None if options.cold or self.ray else ForkServerLauncher()
        self.gpus = GpuPool([] if self.ray else visible_gpus())
        if options.jobs is None:
            jobs = self.ray.slots if self.ray else default_jobs(os.cpu_count(), len(self.gpus.gpus))
            self.options = dataclasses.replace(options, jobs=jobs)
        self._compile_cache_dir = tempfile.TemporaryDirectory(prefix="minimizer-compile-cache-")
        self.compile_cache = CompileCacheStats()
        self.sharing = SharingPayoff(enabled=options.share_verdicts)
        self._stats_lock = threading.Lock()
        self.candidate_log = CandidateLog()
        self.adapt_time_limit = False
        # Once pinned to a generic assert that one compiled target fails alone: every later run compiles only it.
        self.only_compile: str | None = None
        # By candidate key, for the runs that showed the bug: operators Dynamo captured (RunResult).
        self.operators_captured: dict[str, int | None] = {}

    def close(self) -> None:
        """Stop the warm workers and remove the run's compile cache."""

        if isinstance(self.launcher, ForkServerLauncher):
            self.launcher.close()
        if self.ray is not None:
            self.ray.close()
        self.workspace.close()
        self._compile_cache_dir.cleanup()

    # -- checking the original -------------------------------------------------------------------------

    def oracle_specs(self) -> list[str]:
        if self.options.oracle == "auto":
            return list(AUTO_PRIORITY)
        spec = canonical_spec(self.options.oracle)
        try:
            load_oracle(spec)
        except OracleNotFound as exc:
            raise MinimizerError(str(exc)) from None
        except Exception as exc:
            raise MinimizerError(f"oracle {self.options.oracle!r} fails to load: {type(exc).__name__}: {exc}") from None
        return [spec]

    def check(self) -> CheckReport:
        """Run the original ``confirm`` times under plain python and under the oracles (run ``i`` with seed
        ``seed + i``, so a failure that hangs on the random numbers shows as flaky); pin the first oracle that
        fires steadily."""

        specs = self.oracle_specs()
        timeout = self.options.timeout or ORIGINAL_TIMEOUT
        settings = self._settings(tuple(specs), timeout)
        runs_wanted = max(1, self.options.confirm)
        seeds = [self.options.seed + i for i in range(runs_wanted)]
        self.progress.message(
            f"running the original {runs_wanted} time(s) under plain python and under: {', '.join(specs)}"
        )
        # Plain and harness runs alternate, so that with few jobs both kinds start at once (a hang then costs
        # one time limit, not two).
        jobs: list[Callable[[], object]] = []
        for seed in seeds:
            jobs.append(lambda: self._run_plain(self.source, settings.limits))
            jobs.append(lambda seed=seed: self._run(self.source, dataclasses.replace(settings, seed=seed)))
        with _Ticker(self.progress, "the original", timeout):
            done = self._call_all(jobs)
        plain, runs = done[0::2], done[1::2]
        for run in runs:
            if run.timed_out and not (run.verdict("hang").fires and "hang" in specs):
                raise MinimizerError(
                    f"the script did not finish within {timeout:.0f} s, outside any compiled call (raise --timeout)"
                )
            if run.memory_exceeded:
                raise MinimizerError(f"the script exceeded the memory limit of {self.options.memory_mb} MB")
            if not run.completed and not run.signal and not run.timed_out:
                raise MinimizerError(
                    f"the script's process {run.describe_end()}: {run.stderr_tail.strip().splitlines()[-1:] or ''}"
                )
        findings = [OracleFinding(spec, [run.verdict(spec) for run in runs]) for spec in specs]
        report = CheckReport(findings, runs, plain=plain, seeds=seeds)
        report.pinned = next((f for f in findings if f.steady), None)
        return report

    def pin(self, report: CheckReport) -> OracleFinding:
        """The finding to reduce against, or a one-line reason why there is nothing to reduce."""

        problem = diagnose(report, explicit_oracle=self.options.oracle != "auto")
        if problem is not None:
            raise MinimizerError(problem)
        assert report.pinned is not None
        return report.pinned

    def candidate_timeout(self, report: CheckReport) -> float:
        """A candidate's time limit: the user's, else a multiple of the original's slowest run."""

        return self.options.timeout or max(
            MIN_CANDIDATE_TIMEOUT, CANDIDATE_TIMEOUT_FACTOR * max(r.seconds for r in report.runs) + 10
        )

    def hold_to_one_compiled_target(self, pinned: OracleFinding, report: CheckReport) -> OracleFinding:
        """A generic assert (nothing it reads names what failed) over compiled calls: hold the reduction to the
        first target that, compiled alone with the others run eagerly, fails the assert the same way in every
        run; then, where that target returns several tensors (a function computing several losses), to the first
        of them that alone, taken from the compiled call with the others from its eager twin, still does. A
        candidate whose assert fails because another compiled call, or another output of the same call,
        misbehaves (a parity check over several losses, say) is then not the same bug. ``pinned`` unchanged if
        nothing fails it alone."""

        suffix = f" {ONLY_UNDER_COMPILE}"
        generic = pinned.signature.startswith("AssertionError") and "[operands:" not in pinned.signature
        targets = report.runs[0].compiled_targets if report.runs else []
        if pinned.spec != "script" or not generic or not pinned.signature.endswith(suffix) or not targets:
            return pinned
        base = pinned.signature.removesuffix(suffix)
        self.progress.message(
            f"the assert reads nothing that names what failed, over {len(targets)} compiled target(s): "
            "finding the compiled call, and the output of it, that fails it alone"
        )
        held = self._first_failing_alone(targets, base, suffix, report)
        if held is None:
            self.progress.message("no compiled target fails the assert alone: reducing with every target compiled")
            return pinned
        name, finding, runs = held
        outputs = runs[0].compiled_outputs
        if len(outputs) > 1:
            each_output = [f"{name}{ONLY_OUTPUT}{path}" for path in outputs]
            narrowed = self._first_failing_alone(each_output, base, suffix, report)
            if narrowed is not None:
                name, finding, _ = narrowed
        if len(targets) == 1 and ONLY_OUTPUT not in name:
            return pinned  # compiling the one target alone is what every run does: nothing to hold to
        self.only_compile = name
        self.progress.message(
            f"the assert fails with only {name} compiled: every candidate runs so, and the reduction cannot slip "
            "to another compiled call's or output's mismatch"
        )
        return finding

    def _first_failing_alone(
        self, choices: list[str], base: str, suffix: str, report: CheckReport
    ) -> tuple[str, OracleFinding, list[RunResult]] | None:
        """The first of ``choices`` (``only_compile`` values, see Harness) with which the script oracle, over the
        check's seeds, fails steadily with the pinned assert (``base``), marked as run so; its finding and runs."""

        settings = self._settings(("script",), self.candidate_timeout(report))
        for only_compile in choices[:_MOST_TARGETS_TRIED_ALONE]:
            alone = dataclasses.replace(settings, only_compile=only_compile)
            runs = self._call_all(
                [lambda seed=seed: self._run(self.source, dataclasses.replace(alone, seed=seed)) for seed in report.seeds]
            )
            finding = OracleFinding("script", [run.verdict("script") for run in runs])
            if finding.steady and finding.signature == f"{base} {only_compiled(only_compile)}{suffix}":
                return only_compile, finding, runs
        return None

    # -- reducing --------------------------------------------------------------------------------------

    def reduce(self) -> Outcome:
        """Check and pin the original, run the reducers the ``reducer`` option asks for, confirm, write."""

        started, cpu_started = time.monotonic(), time.process_time()
        self.candidate_log.origin = started
        listing = list_tensor_methods_in_background()  # measuring needs it; the check leaves the parent idle
        report = self.check()
        pinned = self.pin(report)
        counts = [run.operators_captured for run in report.runs if run.completed]
        self.operators_captured[candidate_key(self.source)] = None if None in counts or not counts else max(counts)
        self.progress.message(f"pinned oracle {pinned.spec}: {pinned.signature}")
        if len(self.gpus.gpus) > 1:
            self.progress.message(
                f"{self.options.jobs} candidate(s) at once over {len(self.gpus.gpus)} GPUs, each on the least busy one"
            )
        timeout = self.candidate_timeout(report)
        # Unless the user set it, or the bug is a hang (shown by running into the limit), the candidates' own run
        # times take over the limit once there are enough of them (see CandidateLog.time_limit).
        self.adapt_time_limit = not self.options.timeout and pinned.spec != "hang"
        if pinned.spec == "hang":
            # A candidate shows the hang by not finishing within the limit the original did not finish within.
            timeout = max(r.seconds for r in report.runs)
            self.progress.message(
                f"every candidate that still hangs takes {timeout:.0f} s; a smaller --timeout makes this faster"
            )
        # A bug that needs eager to fail (the reverse crash, a failure that is not the compiler's) is where the
        # eager pre-check must not reject candidates.
        precheck = not (pinned.signature.startswith("crash: eager raised") or pinned.signature.endswith(ALSO_WITHOUT_COMPILE))
        pinned = self.hold_to_one_compiled_target(pinned, report)
        settings = dataclasses.replace(self._settings((pinned.spec,), timeout), eager_precheck=precheck)
        target = _Target(pinned.spec, pinned.signature, _own_failure_to_keep(report, pinned))
        if target.own_failure is not None and not has_place(self.source):
            self.progress.message(
                "no statement can reach the compiled call to state the bug: candidates keep the script's own failure "
                f"({target.own_failure}) until one can"
            )
        listing.join()
        state = _BestSoFar(self, report, target, measure(self.source), started)
        end_seconds = seconds_for_the_end(report, self.options.jobs or 1, self.options.confirm)
        deadline = reduction_deadline(started, self.options.max_time, end_seconds)
        if deadline is not None:
            self.progress.message(
                f"reducing for at most {max(0.0, deadline - time.monotonic()):.0f} s: the last "
                f"{started + self.options.max_time - deadline:.0f} s of --max-time go to stating and confirming the repro"
            )
        work = _Work()
        state.work = work
        best_text = self.source
        try:
            if self.options.reducer in ("source", "auto"):
                best_text = self._reduce_source(best_text, target, settings, state, work, deadline)
            captured = self._graphs_if_they_pay(best_text, target, settings) if self.options.reducer == "auto" else None
            if self.options.reducer == "graph" or captured:
                best_text = self._reduce_graph_safely(best_text, target, settings, state, work, deadline, captured)
        except OutOfTime:
            work.stopped_early = True
            best_text = state.best_text
            self.progress.message("time limit reached: keeping the best repro so far")
        except KeyboardInterrupt:
            if len(state.history) > 1:
                state.write(state.best_text, final=False)
            raise

        work.finish()
        unstated = measure(format_source(best_text))
        # What the reduction did is on disk before the repro is stated and confirmed (runs that can take minutes
        # where plain python imports slowly); the final report replaces it.
        if self.options.report:
            self._write_report(self._outcome(state, work, settings, cpu_started, after=unstated))
        best_text, stated = self._state_bug(best_text, target, settings)
        if not stated and can_be_stated(target.spec, target.signature):
            best_text, stated = self._state_an_earlier_step(state.history, best_text, target, settings)
        if not stated and target.spec != "script":
            best_text = self._latest_step_python_fails(state.history, best_text, report, settings)
        if stated:
            settings = _stated_settings(settings, target)
        best_text, confirmations, plain = self._confirm(best_text, target, settings, stated)
        expected, python_fails = _python_failure(confirmations, plain)
        if not python_fails and not stated and target.spec == "script":
            self.progress.message("the repro does not fail steadily under plain python: looking for the latest step that does")
            runs = max(3, self.options.confirm)
            steady = self._latest_step_python_fails(state.history, best_text, report, settings, runs=runs)
            if steady != best_text:
                best_text, confirmations, plain = self._confirm(steady, target, settings, stated)
                expected, python_fails = _python_failure(confirmations, plain)
        fired = sum(target.shown_by(r, stated=stated) for r in confirmations)
        written = state.write(best_text, final=True)
        outcome = self._outcome(
            state,
            work,
            settings,
            cpu_started,
            after=written,
            stated_tokens=written.tokens - unstated.tokens if stated else 0,
            final_fire_rate=(fired, len(confirmations)),
            python={"fails_as_claimed": python_fails, "failure": expected, "runs": [r.to_json() for r in plain]},
        )
        self._write_report(outcome)
        if fired < len(confirmations):
            self.progress.message(
                f"warning: the repro showed the bug in {fired} of {len(confirmations)} confirmation runs"
            )
        if not python_fails:
            seen = next((run.describe() for run in plain if run.failure != expected), "passes")
            claimed = expected or "a failure (it only shows the bug under minimizer's oracles)"
            raise ReproDoesNotFail(
                f"the repro in {outcome.output} does not fail under plain python as claimed "
                f"(expected {claimed}; python: {seen})"
            )
        return outcome

    def _write_report(self, outcome: Outcome) -> None:
        if self.options.report:
            write_atomic(self.options.report, json.dumps(outcome.to_json(), indent=2) + "\n")

    def _outcome(
        self,
        state: _BestSoFar,
        work: _Work,
        settings: RunSettings,
        cpu_started: float,
        *,
        after: Size,
        stated_tokens: int = 0,
        final_fire_rate: tuple[int, int] = (0, 0),
        python: dict | None = None,
    ) -> Outcome:
        """The report of this reduction as it stands: before the repro is confirmed (no ``python``), not final."""

        return Outcome(
            final=python is not None,
            output=self.options.output_path,
            oracle=state.target.spec,
            signature=state.target.signature,
            before=state.before,
            after=after,
            oracle_calls=work.oracle_calls,
            cache_hits=work.cache_hits,
            screened_out=work.screened_out,
            seconds=time.monotonic() - state.started,
            parent_cpu_seconds=time.process_time() - cpu_started,
            screen_cpu_seconds=work.screen_cpu_seconds,
            accepted_steps=state.steps,
            stopped_early=work.stopped_early,
            final_fire_rate=final_fire_rate,
            passes=work.passes,
            compile_cache=self.compile_cache,
            trajectory=state.trajectory,
            stated_tokens=stated_tokens,
            jobs=self.options.jobs or 1,
            gpus=len(self.gpus.gpus),
            sharing=self.sharing.to_json(),
            python=python or {},
            backend=self.ray.describe() if self.ray is not None else {"backend": "local"},
            candidates=self.candidate_log.summary()
            | {"time_limit_seconds": round(self._candidate_time_limit(settings), 1)},
        )

    def _confirm(
        self, text: str, target: _Target, settings: RunSettings, stated: bool
    ) -> tuple[str, list[RunResult], list[PlainRun]]:
        """Run the repro ``confirm`` times under the oracles (seeds varied) and under plain python. If either
        falls short, the repro gets the harness's seeds in its own text and is confirmed again under the fixed
        seed, so plain python draws the numbers the oracles saw. A script that seeded its generators gets a
        seeded repro first. Returns the text and both sets of runs."""

        runs = max(1, self.options.confirm)
        self.progress.message(f"confirming the repro {runs} time(s) under the oracles and under plain python")
        seeded = seed_like_the_harness(text, settings.seed)
        if seeded != text and _may_depend_on_the_draw(target) and seeds_random_numbers(self.source):
            # The user's script was deterministic; a repro whose failure may depend on the draw must be too, and
            # a few passing confirmations of an unseeded one would not show that it is.
            seeded_runs, seeded_plain = self._confirm_runs(seeded, target, settings, [settings.seed] * runs)
            if _confirmed(target, stated, seeded_runs, seeded_plain):
                return seeded, seeded_runs, seeded_plain
        confirmations, plain = self._confirm_runs(text, target, settings, [settings.seed + i for i in range(runs)])
        if _confirmed(target, stated, confirmations, plain):
            return text, confirmations, plain
        if seeded == text:
            return text, confirmations, plain
        self.progress.message("the repro did not confirm: trying it with the random numbers seeded as the oracles did")
        seeded_runs, seeded_plain = self._confirm_runs(seeded, target, settings, [settings.seed] * runs)
        if _confirmed(target, stated, seeded_runs, seeded_plain):
            return seeded, seeded_runs, seeded_plain
        return text, confirmations, plain

    def _confirm_runs(
        self, text: str, target: _Target, settings: RunSettings, seeds: list[int]
    ) -> tuple[list[RunResult], list[PlainRun]]:
        calls = [(lambda seed=seed: self._run(text, dataclasses.replace(settings, seed=seed))) for seed in seeds]
        calls += [lambda: self._run_plain(text, settings.limits) for _ in seeds]
        done = self._call_all(calls)
        return done[: len(seeds)], done[len(seeds) :]

    def _reduce_source(
        self, text: str, target: _Target, settings: RunSettings, state: _BestSoFar, work: _Work, deadline: float | None
    ) -> str:
        """The libcst source reducer, run until a whole round of passes changes nothing."""

        from minimizer.source.format import parse_module, render_module, source_passes, source_size
        from minimizer.source.passes import FOLLOW_UP
        from minimizer.reduce.offload import OffloadedScreen
        from minimizer.source.cst_utils import settled
        from minimizer.source.frozen import FrozenKernels
        from minimizer.source.screen import SourceScreen
        from minimizer.source.viability import Viability

        compares_calls = NEEDS_CALLS in load_oracle(target.spec).needs
        screen = SourceScreen(
            Viability.of(text, oracle_compares_compiled_calls=compares_calls),
            StatementPlace(target.spec, target.signature),
            FrozenKernels.of(text, target.signature),
        )
        jobs = self.options.jobs or 1
        # With several workers and cores to spare, helper processes screen candidates: the parent's CPU limits
        # throughput there. On a host with no spare cores they would only take CPU from the candidates.
        spare_cores = (os.cpu_count() or 1) - jobs
        offloaded = OffloadedScreen(screen, workers=2) if jobs > 1 and spare_cores >= 4 else None
        # A verdict taken from another candidate says nothing of how this one's script ended (see _Target).
        share = target.own_failure is None
        tester: Tester = Tester(
            render_module,
            lambda candidate, cancel: self._still_fails(
                candidate, dataclasses.replace(settings, share_verdicts=share and self.sharing.enabled), target, cancel
            ),
            key=candidate_key,
            screen=lambda candidate: (offloaded or screen)(candidate, state.best_text),
            jobs=jobs,
            on_result=lambda _text, interesting, cached: self.progress.tested(interesting, cached),
            screen_in_workers=offloaded is not None,
            speculation=speculation_for(state.report.device),
        )
        passes = source_passes()
        work.add_stage(tester, passes)
        try:
            reducer = Reducer(
                passes, tester, source_size, state, deadline=deadline, follow_up=FOLLOW_UP, settle=settled
            )
            return render_module(reducer.reduce(parse_module(text)))
        finally:
            tester.close()
            if offloaded is not None:
                offloaded.close()
                work.screen_cpu_seconds += offloaded.cpu_seconds

    def _graphs_if_they_pay(self, text: str, target: _Target, settings: RunSettings) -> list | None:
        """The script's captured graphs if they hold more operators than the script shows (the model lives
        elsewhere, so the graph reducer pays), else ``None``."""

        if target.spec == "inplace" or "compile" not in text:
            return None
        source_ops = measure(text).torch_ops
        bound = self.operators_captured.get(candidate_key(text))
        if bound is not None and bound <= source_ops:
            # No graph holds more than all of them together: no capture run needed to tell.
            self.progress.message(
                f"compiled graphs hold at most {bound} operators, the script shows {source_ops}: "
                "the source reducer already sees the model"
            )
            return None
        from minimizer.graph.capture import CaptureFailed, capture_graphs, case_from_capture
        from minimizer.graph.case import operator_count

        try:
            captured = capture_graphs(text, settings)
        except CaptureFailed as exc:
            self.progress.message(f"graph capture failed ({exc}); staying with the source reducer")
            return None
        cases = [case_from_capture(graph) for graph in captured]
        graph_ops = max((operator_count(case) for case in cases if case is not None), default=0)
        pays = graph_ops > source_ops
        self.progress.message(
            f"compiled graphs hold {graph_ops} operators, the script shows {source_ops}: "
            + ("reducing the graph" if pays else "the source reducer already sees the model")
        )
        return captured if pays else None

    def _reduce_graph_safely(
        self,
        text: str,
        target: _Target,
        settings: RunSettings,
        state: _BestSoFar,
        work: _Work,
        deadline: float | None,
        captured: list | None,
    ) -> str:
        """The graph stage is an extra: if it breaks on an unusual graph, the source result stands."""

        try:
            return self._reduce_graph(text, target, settings, state, work, deadline, captured)
        except (OutOfTime, KeyboardInterrupt):
            raise
        except Exception as exc:  # noqa: BLE001 - reported, and the best repro so far is kept
            self.progress.message(f"graph reduction failed ({type(exc).__name__}: {exc}); keeping the source result")
            return text

    def _reduce_graph(
        self,
        text: str,
        target: _Target,
        settings: RunSettings,
        state: _BestSoFar,
        work: _Work,
        deadline: float | None,
        captured: list | None,
    ) -> str:
        """The FX-graph reducer, then the source reducer on the script it emits; ``text`` if no graph shows the bug."""

        from minimizer.graph.reduce import reduce_graph

        outcome = reduce_graph(
            text,
            settings,
            target.spec,
            target.signature,
            jobs=self.options.jobs,
            progress=state,
            deadline=deadline,
            run=self._run,
            captured=captured,
            speculation=speculation_for(state.report.device),
        )
        work.oracle_calls += outcome.oracle_calls
        work.cache_hits += outcome.cache_hits
        work.passes += outcome.passes
        if outcome.script is None:
            self.progress.message(f"graph reduction: {outcome.reason}")
            return text
        self.progress.message(
            f"graph reduced from {outcome.operators_before} to {outcome.operators_after} operators; polishing its script"
        )
        # The emitted script stands alone: the model's code, wherever it lived, is now in the repro. That beats a
        # shorter script that still imports the model from elsewhere, so it is kept.
        emitted_target = _Target(target.spec, outcome.signature)
        polished = self._reduce_source(outcome.script, emitted_target, settings, state, work, deadline)
        target.signature = emitted_target.signature
        return polished

    def _state_bug(self, text: str, pinned: _Target, settings: RunSettings) -> tuple[str, bool]:
        """``text`` with the bug stated as an ``assert`` at its end, if that still shows the same bug and fails
        when run with plain ``python``; else ``text`` unchanged (the harness still sees the bug). The flag says
        which."""

        versions = state_bug(text, pinned.spec, pinned.signature)
        check = _stated_settings(settings, pinned)
        for stated in versions:
            if pinned.shown_by(self._run(stated, check), stated=True):
                self.progress.message("stated the bug as an assert at the end of the repro")
                return stated, True
        if versions:
            self.progress.message("could not state the bug as plain code; the repro shows it only under minimizer")
        return text, False

    def _state_an_earlier_step(
        self, history: list[str], best_text: str, target: _Target, settings: RunSettings
    ) -> tuple[str, bool]:
        """When the bug cannot be stated in the best repro (its compiled call now sits where no statement can
        reach it), the latest of a few earlier steps where it can: a repro that plain python fails beats a
        smaller one that needs minimizer to show its bug."""

        tried = 0
        for earlier in reversed(history[:-1]):
            if tried == _EARLIER_STEPS_TO_STATE:
                break
            if earlier == best_text or not state_bug(earlier, target.spec, target.signature):
                continue  # free: nothing to run where no statement can be written
            tried += 1
            text, stated = self._state_bug(earlier, target, settings)
            if stated:
                self.progress.message("stated the bug in an earlier, larger step: the last one had no place for it")
                return text, True
        return best_text, False

    def _latest_step_python_fails(
        self, history: list[str], best_text: str, report: CheckReport, settings: RunSettings, runs: int = 1
    ) -> str:
        """Where no step could state the bug, or the repro's failure under plain python was not steady, the
        latest step that plain python still fails as it failed the original (the script's own check) in each of
        ``runs`` runs, found by bisecting the steps (the original itself if no later step does); ``best_text``
        if it fails so already, or if the original did not fail steadily under plain python.

        Steps lose the script's failure for good once its check goes, so the steps that keep it come first; a
        step whose failure hangs on memory nothing wrote (a kernel reading past its tensors) fails now and then,
        and ``runs`` runs of each probe tell it apart; the step returned has been seen to fail in all of them."""

        failures = {run.failure for run in report.plain}
        if len(failures) != 1 or None in failures:
            return best_text
        failure = failures.pop()

        def fails(text: str) -> bool:
            calls = [lambda: self._run_plain(text, settings.limits) for _ in range(runs)]
            return all(run.failure == failure for run in self._call_all(calls))

        if fails(best_text):
            return best_text
        low, high = 0, len(history) - 1  # history[low] fails (the original); history[high] is known not to
        if history[high] != best_text:
            high += 1
        if runs > 1:
            # A step that fails only now and then (its failure hangs on memory nothing wrote) comes late, from
            # shrinking a size, and later steps may fail steadily again: the last few go first, one by one.
            for step in range(high - 1, max(low, high - 1 - _STEPS_TRIED_FIRST), -1):
                if fails(history[step]):
                    low = high = step
                    break
        while high - low > 1:
            middle = (low + high) // 2
            if fails(history[middle]):
                low = middle
            else:
                high = middle
        kind = failure.split(": ", 1)[0]
        self.progress.message(
            f"keeping the latest step plain python fails as it failed the original ({kind}): step {low} of "
            f"{len(history) - 1}"
            if low
            else f"no step but the original fails under plain python as it did ({kind}): keeping the original"
        )
        return history[low]

    # -- helpers ---------------------------------------------------------------------------------------

    def _settings(self, specs: tuple[str, ...], timeout: float) -> RunSettings:
        return RunSettings(
            filename=self.options.script.name,
            origin_dir=self.origin_dir,
            beside=str(self.workspace.folder),
            oracles=specs,
            limits=Limits(timeout=timeout, memory_mb=self.options.memory_mb),
            seed=self.options.seed,
            compile_cache=self._compile_cache_dir.name,
            only_compile=self.only_compile,
            settle_from=self.source,
        )

    def _call_all(self, calls: list[Callable[[], object]]) -> list:
        """Call each of ``calls`` (runs of a script), up to ``jobs`` at once; their results in order."""

        jobs = min(self.options.jobs or 1, len(calls))
        if jobs <= 1:
            return [call() for call in calls]
        pool = ThreadPoolExecutor(jobs)
        try:
            return list(pool.map(lambda call: call(), calls))
        except BaseException:
            kill_all_candidates()  # Ctrl-C: the threads wait on processes that must go first
            raise
        finally:
            pool.shutdown(wait=True, cancel_futures=True)

    def _run_plain(self, source: str, limits: Limits) -> PlainRun:
        return run_plain(source, self.options.script.name, str(self.workspace.folder), limits)

    def _run(self, source: str, settings: RunSettings, cancel: threading.Event | None = None) -> RunResult:
        if self.ray is not None:
            result = self.ray.run(source, settings, cancel)
        else:
            result = run_candidate(source, settings, launcher=self.launcher, cancel=cancel, gpus=self.gpus)
        with self._stats_lock:
            self.compile_cache.add(result.compile_cache)
        return result

    def _candidate_time_limit(self, settings: RunSettings) -> float:
        first = settings.limits.timeout
        if not self.adapt_time_limit:
            return first
        return self.candidate_log.time_limit(first, factor=CANDIDATE_TIMEOUT_FACTOR, floor=MIN_CANDIDATE_TIMEOUT)

    def _still_fails(self, source: str, settings: RunSettings, target: _Target, cancel: threading.Event) -> bool | None:
        """Whether the candidate shows the pinned bug; ``None`` if it was cancelled before it could tell."""

        limit = self._candidate_time_limit(settings)
        if limit != settings.limits.timeout:
            settings = dataclasses.replace(settings, limits=dataclasses.replace(settings.limits, timeout=limit))
        started = time.monotonic()
        result = self._run(source, settings, cancel)
        shown = None if result.cancelled else target.shown_by(result, text=source)
        if shown:
            with self._stats_lock:
                self.operators_captured[candidate_key(source)] = result.operators_captured
        # Where the time went (for runs that answered): the parent's own part (the run folder, reading the
        # result), the process's start and end beyond its own clock (fork or hand-over, exit), the process's parts.
        parts = None
        if result.phase_seconds:
            parts = {
                "parent": time.monotonic() - started - result.seconds,
                "launch and exit": result.seconds - sum(result.phase_seconds.values()),
                **result.phase_seconds,
            }
        self.candidate_log.record(
            source,
            result.seconds,
            timed_out=result.timed_out,
            cancelled=result.cancelled,
            stacks=result.stacks,
            started=started,
            interesting=shown,
            key=short_key(source),
            parts=parts,
        )
        if result.cancelled:
            return None
        with self._stats_lock:
            sharing_was_on = self.sharing.enabled
            self.sharing.observe(result)
            switched_off = sharing_was_on and not self.sharing.enabled
        if switched_off:
            self.progress.message(
                f"sharing verdicts does not pay here (tracing cost {self.sharing.tracing_seconds:.0f} s, "
                f"sharing saved about {self.sharing.saved_seconds:.0f} s): switched off"
            )
        return shown


# Steps from the end tried one by one before bisecting, when looking for one that fails steadily.
_STEPS_TRIED_FIRST = 6


def _python_failure(confirmations: list[RunResult], plain: list[PlainRun]) -> tuple[str | None, bool]:
    """The failure the first oracle run ended with, and whether every plain run failed with it."""

    expected = confirmations[0].failure if confirmations else None
    return expected, expected is not None and all(run.failure == expected for run in plain)


def _may_depend_on_the_draw(target: _Target) -> bool:
    """Whether the bug is about values, which other random numbers can move across a tolerance. A crash, or the
    script raising anything but a failed assert, is about what runs, not about the numbers."""

    if target.spec == "script":
        return target.signature.startswith("AssertionError")
    return target.spec in _VALUE_ORACLES


def _confirmed(target: _Target, stated: bool, confirmations: list[RunResult], plain: list[PlainRun]) -> bool:
    """Every oracle run showed the bug with the same failure, and every plain run failed with it too."""

    expected, python_fails = _python_failure(confirmations, plain)
    return (
        python_fails
        and all(target.shown_by(r, stated=stated) for r in confirmations)
        and all(r.failure == expected for r in confirmations)
    )


class _Ticker:
    """Says every ``every`` seconds that something long is still running (a hang shows as a clock, not silence)."""

    def __init__(self, progress: Progress, what: str, limit: float, every: float = 30.0):
        self.progress, self.what, self.limit, self.every = progress, what, limit, every
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._tick, daemon=True)

    def _tick(self) -> None:
        started = time.monotonic()
        while not self._stop.wait(self.every):
            elapsed = time.monotonic() - started
            self.progress.message(f"still running {self.what}: {elapsed:.0f} s of at most {self.limit:.0f} s")

    def __enter__(self) -> _Ticker:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()


class ReproDoesNotFail(MinimizerError):
    """The repro was written, but plain python does not fail with the bug it claims."""


def _stated_settings(settings: RunSettings, target: _Target) -> RunSettings:
    """How a repro that states the bug runs: the pinned oracle and ``script``, which must see it fail alone."""

    return dataclasses.replace(settings, oracles=(target.spec, "script"), eager_precheck=False)


@dataclass
class _Target:
    """The bug every candidate must show: an oracle and its signature.

    ``own_failure``: how the original ended under plain python (its own check failing). A candidate whose
    compiled call no statement can reach (see ``StatementPlace``) must still end so: the bug could not be stated
    in its repro, which would then fail under plain python only if its own check still did.
    """

    spec: str
    signature: str
    own_failure: str | None = None

    def shown_by(self, result: RunResult, *, stated: bool = False, text: str | None = None) -> bool:
        """Whether a run shows this bug (``stated``: by a repro that states it, see ``shows_bug``); with the
        candidate's ``text``, also that it keeps the script's own failure where it must."""

        if not shows_bug(result, self.spec, self.signature, stated=stated):
            return False
        if stated or text is None or self.own_failure is None or result.failure == self.own_failure:
            return True
        return has_place(text)


def _own_failure_to_keep(report: CheckReport, pinned: OracleFinding) -> str | None:
    """The original's failure under plain python, where candidates may have to keep it (see ``_Target``): for a
    bug that can be stated, when every plain run and every oracle run ended with the same failure."""

    if not stated_at_the_compiled_call(pinned.spec, pinned.signature):
        return None  # a crash is its failure; the in-place check has a place in every script
    failure = report.plain_failure
    if failure is None or failure == DID_NOT_FINISH or failure.startswith("killed by"):
        return None
    return failure if all(run.failure == failure for run in report.runs) else None


@dataclass
class _Work:
    """Oracle calls and pass payoffs summed over the stages of one reduction."""

    oracle_calls: int = 0
    cache_hits: int = 0
    screened_out: int = 0
    screen_cpu_seconds: float = 0.0
    stopped_early: bool = False
    passes: list[dict] = field(default_factory=list)
    _testers: list[tuple[Tester, list]] = field(default_factory=list)

    def add_stage(self, tester: Tester, passes: list) -> None:
        self._testers.append((tester, passes))

    @property
    def live_calls(self) -> tuple[int, int]:
        calls = self.oracle_calls + sum(t.stats.oracle_calls for t, _ in self._testers)
        hits = self.cache_hits + sum(t.stats.cache_hits for t, _ in self._testers)
        return calls, hits

    def finish(self) -> None:
        self.oracle_calls, self.cache_hits = self.live_calls
        self.screened_out += sum(t.stats.screened_out for t, _ in self._testers)
        for _, passes in self._testers:
            self.passes += [
                {
                    "pass": p.name,
                    "proposed": p.tried,
                    "accepted": p.accepted,
                    "size_removed": p.size_removed,
                    "removed_per_proposal": round(p.payoff, 3),
                }
                for p in passes
            ]
        self._testers.clear()


class _BestSoFar:
    """Observes the reducers: writes the best repro after every step that made it smaller, so an interruption
    loses nothing, and forwards events to the progress display."""

    def __init__(self, session: Session, report: CheckReport, target: _Target, before: Size, started: float):
        self.session = session
        self.report = report
        self.target = target
        self.before = before
        self.started = started
        self.best_text = session.source
        self.best_tokens = before.tokens
        self.steps = 0
        self.work: _Work | None = None
        self.trajectory: list[dict] = [{"oracle_calls": 0, "seconds": 0.0, "tokens": before.tokens}]
        self.history: list[str] = [session.source]  # every best so far, oldest first

    def message(self, text: str) -> None:
        self.session.progress.message(text)

    def tested(self, interesting: bool, cached: bool) -> None:
        self.session.progress.tested(interesting, cached)

    def reduction_started(self, size: int) -> None:
        self.session.progress.reduction_started(size)

    def pass_started(self, name: str) -> None:
        self.session.progress.pass_started(name)

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.steps += 1
        tokens = count_tokens(text)
        if tokens <= self.best_tokens:
            if tokens < self.best_tokens:
                calls = self.work.live_calls[0] if self.work else 0
                seconds = round(time.monotonic() - self.started, 2)
                self.trajectory.append({"oracle_calls": calls, "seconds": seconds, "tokens": tokens, "pass": pass_name})
            self.best_text, self.best_tokens = text, tokens
            self.history.append(text)
            # Unformatted: formatting every step cost the parent more than the rest of writing; an interrupted
            # run rewrites the best so far formatted (`reduce`), as the final write does.
            self.write(text, final=False, formatted=False)
        self.session.progress.accepted(text, size, pass_name)

    def write(self, text: str, *, final: bool, formatted: bool = True) -> Size:
        """Write ``text`` (formatted, unless told otherwise) with its header; the size of what was written."""

        calls, hits = self.work.live_calls if self.work else (0, 0)
        if formatted:
            text = format_source(text)
        info = ReproInfo(
            source_name=self.session.options.script.name,
            torch_version=self.report.torch_version,
            device=self.report.device,
            oracle=self.target.spec,
            signature=self.target.signature,
            before=self.before,
            after=measure(text),
            oracle_calls=calls,
            cache_hits=hits,
            seconds=time.monotonic() - self.started,
            final=final,
        )
        write_atomic(self.session.options.output_path, render_repro(text, info))
        return info.after
