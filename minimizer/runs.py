"""How the stages run scripts: under the oracles (warm forks, cold interpreters or Ray tasks), under plain
python, several at once; and what those runs cost, summed over the whole reduction.

``Runs`` owns the resources every stage shares (the snapshot of the files beside the script, the warm workers,
the GPUs, the compile cache, the log of candidates' runs); the stages only ask it to run things.
"""

from __future__ import annotations

import dataclasses
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable

from minimizer.candidate_log import CandidateLog
from minimizer.options import CANDIDATE_TIMEOUT_FACTOR, MIN_CANDIDATE_TIMEOUT, Options
from minimizer.progress import Progress
from minimizer.reduce.keys import candidate_key, short_key
from minimizer.runner.gpus import GpuPool, default_jobs, usable_cores, visible_gpus
from minimizer.runner.plain import PlainRun, run_plain
from minimizer.runner.process import Launcher, allow_candidates, kill_all_candidates, run_candidate
from minimizer.runner.run_types import CompileCacheStats, Limits, RunResult, RunSettings, mended_with_operators_eager
from minimizer.runner.resident_trust import ResidentTrust
from minimizer.runner.shared_verdicts import SharingPayoff
from minimizer.runner.warm import ForkServerLauncher
from minimizer.runner.workspace import Workspace
from minimizer.stage_clock import StageClock
from minimizer.stages.cost import CostBound


class Runs:
    """Runs scripts for the stages of one reduction of ``options.script``."""

    def __init__(self, options: Options, progress: Progress, source: str, original: str | None = None):
        allow_candidates()  # an earlier run in this process may have been stopped
        self.progress = progress
        # The script as every candidate starts from (its arguments written into it, see source.script_args),
        # and as the user wrote it, which plain python runs with the arguments in the check.
        self.source = source
        self.original = source if original is None else original
        self.clock = StageClock()  # where the time goes, for the report (the session times its stages)
        self.origin_dir = str(options.script.resolve().parent)
        # The files beside the script, as every run sees them (the script itself and our output left out).
        self.workspace = Workspace(Path(self.origin_dir), leave_out={options.script.name, options.output_path.name})
        self.ray = None
        if options.ray:
            from minimizer.runner.ray_backend import RayBackend

            self.ray = RayBackend(options.ray)
        self.launcher: Launcher | None = None if options.cold or self.ray else ForkServerLauncher()
        self.gpus = GpuPool([] if self.ray else visible_gpus())
        self.residents = ResidentTrust(
            wanted=isinstance(self.launcher, ForkServerLauncher)
            and (options.resident == "always" or (options.resident == "auto" and bool(self.gpus.gpus)))
        )
        if options.jobs is None:
            jobs = self.ray.slots if self.ray else default_jobs(usable_cores(), len(self.gpus.gpus))
            options = dataclasses.replace(options, jobs=jobs)
        self.options = options
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
        # Set by the pin stage from the original's runs: what a candidate may cost (stages.cost).
        self.cost_bound: CostBound | None = None
        self.refused_for_cost = 0

    @property
    def jobs(self) -> int:
        return self.options.jobs or 1

    def close(self) -> None:
        """Stop the warm workers and remove the run's compile cache."""

        if isinstance(self.launcher, ForkServerLauncher):
            self.launcher.close()
        if self.ray is not None:
            self.ray.close()
        self.workspace.close()
        self._compile_cache_dir.cleanup()

    def settings(self, specs: tuple[str, ...], timeout: float) -> RunSettings:
        """How a run under the oracles ``specs`` goes, with ``timeout`` seconds."""

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

    def call_all(self, calls: list[Callable[[], Any]]) -> list:
        """Call each of ``calls`` (runs of a script), up to ``jobs`` at once; their results in order."""

        jobs = min(self.jobs, len(calls))
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

    def plain(
        self, source: str, limits: Limits, args: tuple[str, ...] = (), python: str | None = None,
        cancel: threading.Event | None = None,
    ) -> PlainRun:
        """``source`` under plain python, as the user runs it (in the snapshot of its folder), with ``args``;
        ``python``: another interpreter than ours (``--fixed-in``)."""

        folder = str(self.workspace.folder)
        python = python or sys.executable
        run = run_plain(source, self.options.script.name, folder, limits, args=args, python=python, cancel=cancel)
        if source == self.original:
            self.clock.ran_the_original(run.seconds)
        return run

    def plain_beside_the_original(self, source: str, limits: Limits) -> list[PlainRun]:
        """A plain run of the original and one of ``source``, at once: both under the same load."""

        return self.call_all(
            [lambda: self.plain(self.original, limits, self.options.script_args), lambda: self.plain(source, limits)]
        )

    def run(self, source: str, settings: RunSettings, cancel: threading.Event | None = None) -> RunResult:
        """``source`` under the oracles of ``settings``."""

        if settings.resident != self.residents.in_use:
            # Decided here, run by run: given up at a disagreement, every later run gets a process of its own.
            settings = dataclasses.replace(settings, resident=self.residents.in_use)
        if self.ray is not None:
            result = self.ray.run(source, settings, cancel)
        else:
            result = run_candidate(source, settings, launcher=self.launcher, cancel=cancel, gpus=self.gpus)
        with self._stats_lock:
            self.compile_cache.add(result.compile_cache)
        if source == self.source:
            self.clock.ran_the_original(result.seconds)
        return result

    def candidate_time_limit(self, settings: RunSettings) -> float:
        first = settings.limits.timeout
        if not self.adapt_time_limit:
            return first
        return self.candidate_log.time_limit(first, factor=CANDIDATE_TIMEOUT_FACTOR, floor=MIN_CANDIDATE_TIMEOUT)

    def still_fails(self, source: str, settings: RunSettings, target: Any, cancel: threading.Event) -> bool | None:
        """Whether the candidate shows ``target``'s bug (a ``stages.pin.Target``); ``None`` if it was cancelled
        before it could tell. Every answer is logged (``candidate_log``)."""

        limit = self.candidate_time_limit(settings)
        if limit != settings.limits.timeout:
            settings = dataclasses.replace(settings, limits=dataclasses.replace(settings.limits, timeout=limit))
        started = time.monotonic()
        result = self.run(source, settings, cancel)
        shown = None if result.cancelled else target.shown_by(result, text=source)
        if self.residents.to_check(result.resident_jobs_before, shown, source):
            result, shown = self._checked_fresh(source, settings, target, cancel, result, shown)
        if shown and self.cost_bound is not None:
            shown = self._within_cost(result)
        if shown and target.operator:
            shown = mended_with_operators_eager(self.run, source, settings, [target.operator], target.shown_by, cancel)
        if shown:
            with self._stats_lock:
                self.operators_captured[candidate_key(source)] = result.operators_captured
        self.candidate_log.record(
            source,
            result.seconds,
            timed_out=result.timed_out,
            cancelled=result.cancelled,
            stacks=result.stacks,
            started=started,
            interesting=shown,
            key=short_key(source),
            parts=_parts(result, started),
        )
        if result.cancelled:
            return None
        self._observe_sharing(result)
        return shown

    def _checked_fresh(
        self, source: str, settings: RunSettings, target: Any, cancel: threading.Event, result: RunResult, shown: bool
    ) -> tuple[RunResult, bool | None]:
        """A resident worker's answer checked in a fresh process (``resident_trust``): the fresh run and its
        answer, which stand."""

        fresh = self.run(source, dataclasses.replace(settings, fresh=True), cancel)
        if fresh.cancelled:
            return fresh, None
        fresh_shown = target.shown_by(fresh, text=source)
        given_up = self.residents.compare(shown, fresh_shown, short_key(source))
        if given_up:
            self.progress.message(f"resident workers given up, fresh processes from now on ({given_up})")
        return fresh, fresh_shown

    def _within_cost(self, result: RunResult) -> bool:
        """Whether a candidate that shows the bug costs no more to run than the original allows (``stages.cost``)."""

        why = self.cost_bound.exceeded_by(result) if self.cost_bound is not None else None
        if why is None:
            return True
        with self._stats_lock:
            self.refused_for_cost += 1
            first = self.refused_for_cost == 1
        if first:
            self.progress.message(f"a candidate shows the bug but costs markedly more than the original ({why}): refused")
        return False

    def _observe_sharing(self, result: RunResult) -> None:
        with self._stats_lock:
            sharing_was_on = self.sharing.enabled
            self.sharing.observe(result)
            switched_off = sharing_was_on and not self.sharing.enabled
        if switched_off:
            self.progress.message(
                f"sharing verdicts does not pay here (tracing cost {self.sharing.tracing_seconds:.0f} s, "
                f"sharing saved about {self.sharing.saved_seconds:.0f} s): switched off"
            )


def _parts(result: RunResult, started: float) -> dict[str, float] | None:
    """Where the time of a run that answered went: the parent's own part (the run folder, reading the result),
    the process's start and end beyond its own clock (fork or hand-over, exit), the process's parts."""

    if not result.phase_seconds:
        return None
    return {
        "parent": time.monotonic() - started - result.seconds,
        "launch and exit": result.seconds - sum(result.phase_seconds.values()),
        **result.phase_seconds,
    }
