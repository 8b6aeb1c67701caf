"""What the reduction has done so far: the best repro (on disk after every step that made it smaller, so an
interruption loses nothing), every step's text, and the oracle calls and pass payoffs it cost."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Callable

from minimizer.metrics import Size, count_tokens, measure
from minimizer.options import Options
from minimizer.files import write_atomic
from minimizer.output import ReproInfo, render_repro
from minimizer.progress import Progress
from minimizer.reduce.tester import Tester
from minimizer.runner.plain import PlainRun
from minimizer.source.layout import format_source
from minimizer.stages.check import CheckReport
from minimizer.stages.pin import Target
from minimizer.stages.plain_watch import PlainWatch


@dataclass
class Work:
    """Oracle calls and pass payoffs summed over the stages of one reduction."""

    oracle_calls: int = 0
    cache_hits: int = 0
    screened_out: int = 0
    screen_cpu_seconds: float = 0.0
    stopped_early: bool = False
    passes: list[dict] = field(default_factory=list)
    # The reducers that made the repro, in the order they ran: "graph" (the lift, or the graph stage), "source".
    reducers: list[str] = field(default_factory=list)
    # The backend every candidate's compiled calls used where a cheaper one than the script's showed the bug.
    reduced_with: str = ""
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


class BestSoFar:
    """Observes the reducers: writes the best repro after every step that made it smaller, so an interruption
    loses nothing, and forwards events to the progress display."""

    def __init__(
        self, options: Options, progress: Progress, report: CheckReport, target: Target, source: str, started: float
    ):
        self.options = options
        self.progress = progress
        self.report = report
        self.target = target
        self.before = measure(source)
        self.started = started
        self.best_text = source
        self.best_tokens = self.before.tokens
        self.steps = 0
        self.work = Work()
        self.trajectory: list[dict] = [{"oracle_calls": 0, "seconds": 0.0, "tokens": self.before.tokens}]
        self.history: list[str] = [source]  # every best so far, oldest first
        # Where the original fails under plain python: the steps are checked there as they come, and only those
        # that fail so are written (``stages.plain_watch``); ``plain_confirmed`` is the latest of them.
        self.watch: PlainWatch | None = None
        self.plain_confirmed = source

    def message(self, text: str) -> None:
        self.progress.message(text)

    def tested(self, interesting: bool, cached: bool) -> None:
        self.progress.tested(interesting, cached)

    def reduction_started(self, size: int) -> None:
        self.progress.reduction_started(size)

    def pass_started(self, name: str) -> None:
        self.progress.pass_started(name)

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.steps += 1
        tokens = count_tokens(text)
        if tokens <= self.best_tokens:
            if tokens < self.best_tokens:
                calls = self.work.live_calls[0]
                seconds = round(time.monotonic() - self.started, 2)
                self.trajectory.append({"oracle_calls": calls, "seconds": seconds, "tokens": tokens, "pass": pass_name})
            self.best_text, self.best_tokens = text, tokens
            self.history.append(text)
            # Unformatted: formatting every step cost the parent more than the rest of writing; an interrupted
            # run rewrites the best so far formatted (`reduce`), as the final write does.
            if self.watch is not None:
                self.watch.offer(text)
            else:
                self.write(text, final=False, formatted=False)
        self.progress.accepted(text, size, pass_name)

    def watch_under_plain_python(self, run_plain: Callable[[str, threading.Event], PlainRun], failure: str) -> None:
        """From now on, write only steps plain python has seen fail with ``failure``'s kind (``PlainWatch``); the
        original, which does, is on disk from the start."""

        self.write(self.plain_confirmed, final=False, formatted=False)
        self.watch = PlainWatch(run_plain, failure, self._plain_python_fails)

    def stop_watching(self) -> None:
        if self.watch is not None:
            self.watch.close()

    def write_interrupted(self) -> None:
        """What an interruption leaves: the latest step plain python has seen fail (formatted), or, where
        nothing is watched, the best so far."""

        self.stop_watching()
        if self.watch is not None:
            self.write(self.plain_confirmed, final=False)
        elif len(self.history) > 1:
            self.write(self.best_text, final=False)

    def _plain_python_fails(self, text: str) -> None:
        self.plain_confirmed = text
        self.write(text, final=False, formatted=False)

    def write(
        self, text: str, *, final: bool, formatted: bool = True, cost: str = "", compares: str = "", culprit: str = "",
        fails: str = "",
    ) -> Size:
        """Write ``text`` (formatted, unless told otherwise) with its header (``cost``: what plain python runs
        cost; ``compares``: what its failing check compares; ``culprit``: the layer the bug lives in; ``fails``:
        what fails in words, where the repro's own runs told it, else the pinned bug's; see ``ReproInfo``); the
        size of what was written."""

        calls, hits = self.work.live_calls
        if formatted:
            text = format_source(text)
        info = ReproInfo(
            source_name=self.options.script.name,
            torch_version=self.report.torch_version,
            device=self.report.device,
            oracle=self.target.spec,
            fails=fails or self.target.bug.in_words(),
            before=self.before,
            after=measure(text),
            oracle_calls=calls,
            cache_hits=hits,
            seconds=time.monotonic() - self.started,
            final=final,
            cost=cost,
            compares=compares,
            culprit=culprit,
        )
        write_atomic(self.options.output_path, render_repro(text, info))
        return info.after
