"""Drive a graph reduction: capture the script's graphs, find one that still shows the bug, shrink it, emit it.

The scheduler and the tester are the shared ones (``minimizer.reduce``); this module only supplies the graph
format: ``emit_script`` renders a candidate, ``case_size`` orders them, ``graph_passes`` propose them.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from minimizer.graph.capture import CaptureFailed, CapturedGraph, capture_graphs, case_from_capture
from minimizer.graph.case import GraphCase, case_size, operator_count, with_recorded_values
from minimizer.graph.emit import emit_script
from minimizer.graph.prelude import prelude_from_script, script_backend
from minimizer.graph.spelling import nameable
from minimizer.graph.passes import graph_passes
from minimizer.metrics import count_tokens
from minimizer.reduce.scheduler import OutOfTime, Reducer
from minimizer.reduce.tester import Speculation, Tester
from minimizer.runner.process import run_candidate
from minimizer.runner.run_types import RunResult, RunSettings, mended_with_operators_eager
from oracles.api import Verdict
from oracles.bug import Bug, same_bug

# run(script_text, settings, cancel) -> RunResult, like ``run_candidate`` with a launcher bound.
Runner = Callable[..., RunResult]

# The emitted script checks with an assert of its own; under the ``script`` oracle its bug cannot be the
# original's assert, so an assertion failure of the emitted script is accepted and pinned instead.


@dataclass
class GraphOutcome:
    """What a graph reduction produced: the script (``None`` when no graph showed the bug) and why not."""

    script: str | None
    reason: str = ""
    bug: Bug = field(default_factory=lambda: Bug(""))
    graphs_captured: int = 0
    graph_index: int | None = None
    operators_before: int = 0
    operators_after: int = 0
    oracle_calls: int = 0
    cache_hits: int = 0
    seconds: float = 0.0
    stopped_early: bool = False
    passes: list[dict] = field(default_factory=list)


def reduce_graph(
    script_source: str,
    settings: RunSettings,
    oracle_spec: str,
    bug: Bug,
    *,
    jobs: int = 1,
    progress: Any = None,
    deadline: float | None = None,
    run: Runner = run_candidate,
    captured: list[CapturedGraph] | None = None,
    speculation: Speculation | None = None,
    operator: str = "",
) -> GraphOutcome:
    """Shrink the graph that shows the bug; its emitted script, or ``None`` with a ``reason``, plus the numbers.

    ``settings``: how candidates run (``oracles`` become ``oracle_spec``); ``progress`` receives the source
    reducer's calls; after ``deadline`` (``time.monotonic()``) the best so far is returned; ``run`` runs one
    candidate; ``captured``: the script's graphs where the caller captured them; ``speculation``: how freely
    questions run ahead; ``operator``: the aten operator whose eager kernel must still mend the bug.
    """
    started = time.monotonic()
    report = _Progress(progress)
    settings = dataclasses.replace(settings, oracles=(oracle_spec,))
    try:
        captured = captured if captured is not None else _capture(script_source, settings, report)
    except CaptureFailed as exc:
        return GraphOutcome(None, str(exc), seconds=time.monotonic() - started)
    if not captured:
        return GraphOutcome(None, "the script compiled no graph", seconds=time.monotonic() - started)
    check = "requires_grad" if oracle_spec == "requires-grad" else "allclose"
    pinned = _Pin(oracle_spec, bug, operator)
    start = _first_failing_graph(captured, _prelude(script_source, captured), check, pinned, settings, oracle_spec, report, run)
    if start is None:
        return GraphOutcome(
            None,
            f"none of the {len(captured)} captured graph(s), run on its own, fires {oracle_spec} with the same signature",
            graphs_captured=len(captured),
            seconds=time.monotonic() - started,
        )
    index, case = start
    report.message(f"graph {index} of {len(captured)} shows the bug ({operator_count(case)} operators); reducing it")

    still_fails = functools.partial(pinned.still_fails, run, settings)
    result, tester, passes, stopped_early = _shrink(case, still_fails, report, jobs, deadline, speculation)
    script = emit_script(result)
    return GraphOutcome(
        script=script,
        bug=pinned.shown.get(script, pinned.bug),
        graphs_captured=len(captured),
        graph_index=index,
        operators_before=operator_count(case),
        operators_after=operator_count(result),
        oracle_calls=tester.stats.oracle_calls,
        cache_hits=tester.stats.cache_hits,
        seconds=time.monotonic() - started,
        stopped_early=stopped_early,
        passes=[{"pass": p.name, "proposed": p.tried, "accepted": p.accepted} for p in passes],
    )


def _capture(script_source: str, settings: RunSettings, report: _Progress) -> list[CapturedGraph]:
    report.message("capturing the graphs torch.compile sees")
    return capture_graphs(script_source, settings)


def _shrink(
    case: GraphCase,
    still_fails: Callable[[str, threading.Event], bool | None],
    report: _Progress,
    jobs: int,
    deadline: float | None,
    speculation: Speculation | None,
) -> tuple[GraphCase, Tester, list, bool]:
    """The graph passes run on ``case`` until a round changes nothing (or ``deadline``): the smallest case, the
    tester (its counts), the passes (their payoffs), whether time ran out."""

    best = _BestCase(case, report)
    tester: Tester[GraphCase] = Tester(
        best.render,
        still_fails,
        jobs=jobs,
        on_result=lambda text, interesting, cached: report.tested(interesting, cached),
        speculation=speculation,
    )
    passes = graph_passes()
    reducer = Reducer(passes, tester, case_size, best, deadline=deadline)
    try:
        return reducer.reduce(case), tester, passes, False
    except OutOfTime:
        report.message("time limit reached: keeping the smallest graph so far")
        return best.case, tester, passes, True
    finally:
        tester.close()


def _prelude(script_source: str, captured: list) -> str:
    """What every emitted program starts with: the script's imports and configuration, and the definition of a
    backend the script defines, with what it reads (the emitted program compiles with it by name)."""

    return prelude_from_script(script_source, {script_backend(g.compile.backend) for g in captured} - {None})


def _first_failing_graph(
    captured: list[CapturedGraph],
    prelude: str,
    check: str,
    pinned: _Pin,
    settings: RunSettings,
    oracle_spec: str,
    report: _Progress,
    run: Runner,
) -> tuple[int, GraphCase] | None:
    """The first graph (last compiled first: a crash stops at the failing graph) whose script shows the bug: with
    random inputs, else with the small floating inputs the call was made with."""

    seen: set[str] = set()
    for graph in reversed(captured):
        if not nameable(graph.compile):
            report.message(f"graph {graph.index}: compiled with {graph.compile.backend.partition(':')[2]}, a backend"
                           " made inside a function that a lifted program cannot name; skipped")
            continue
        case = case_from_capture(graph, prelude=prelude, check=check)
        if case is None:
            report.message(f"graph {graph.index}: does not re-run from its recorded inputs; skipped")
            continue
        for candidate in (case, with_recorded_values(case)):
            text = None if candidate is None else emit_script(candidate)
            if text is None or text in seen:  # recompilations often capture the same graph again
                continue
            seen.add(text)
            verdict = run(text, settings).verdict(oracle_spec)
            if pinned.accepts_first(verdict):
                return graph.index, candidate
            report.message(f"graph {graph.index}: on its own, {_describe(verdict)}")
    return None


class _Pin:
    """The signature every candidate must show; re-pinned once when the original's was its own assert, or a
    parameter's gradient (the emitted graph takes its parameters as inputs: ``gradient: parameter float32
    value`` shows there as ``gradient: input float32 value``)."""

    def __init__(self, oracle_spec: str, bug: Bug, operator: str = ""):
        self.oracle_spec = oracle_spec
        self.bug = bug
        self.operator = operator
        self._may_repin = oracle_spec == "script" and bug.is_assertion
        self.shown: dict[str, Bug] = {}  # each candidate that showed the bug: the bug it showed

    def still_fails(self, run: Runner, settings: RunSettings, text: str, cancel: threading.Event) -> bool | None:
        """Whether candidate ``text`` shows the bug (``None``: cancelled); what it showed is kept in ``shown``."""

        result = run(text, settings, cancel=cancel)
        if result.cancelled:
            return None
        verdict = result.verdict(self.oracle_spec)
        if not self.matches(verdict):
            return False
        if self.operator:
            mended = mended_with_operators_eager(run, text, settings, [self.operator], self._shown_by, cancel)
            if not mended:
                return mended  # False: the bug no longer goes with its operator's lowering, another bug
        self.shown[text] = verdict.found
        return True

    def _shown_by(self, result: RunResult) -> bool:
        return self.matches(result.verdict(self.oracle_spec))

    def accepts_first(self, verdict: Verdict) -> bool:
        if not verdict.fires:
            return False
        seen = verdict.found
        if same_bug(self.bug, seen):
            return True
        if (self._may_repin and seen.is_assertion) or same_bug(self.bug, seen, parameters_as_inputs=True):
            self.bug = seen
            return True
        return False

    def matches(self, verdict: Verdict) -> bool:
        """The pinned signature; for a parameter's wrong gradient, also the same gradient of an input: a
        parameter turned into an input (``parameters_to_inputs``) keeps the bug and changes only that word."""

        return verdict.fires and same_bug(self.bug, verdict.found, parameters_as_inputs=True)


def _describe(verdict: Verdict) -> str:
    if not verdict.fires:
        return f"the oracle does not fire ({verdict.detail or 'no failure'})"
    return f"a different failure: {verdict.signature[:160]}"


class _Progress:
    """The caller's progress observer, with every method optional."""

    def __init__(self, progress: Any):
        self._progress = progress

    def __getattr__(self, name: str) -> Callable[..., None]:
        method = getattr(self._progress, name, None)
        return method if callable(method) else (lambda *args, **kwargs: None)


class _BestCase:
    """Renders candidates and observes the reducer: remembers the best case (for a deadline), reports tokens."""

    _RECENT = 512

    def __init__(self, case: GraphCase, report: _Progress):
        self.case = case
        self.report = report
        self._rendered: dict[str, GraphCase] = {}

    def render(self, case: GraphCase) -> str:
        text = emit_script(case)
        if len(self._rendered) > self._RECENT:
            self._rendered.clear()
        self._rendered[text] = case
        return text

    def reduction_started(self, size: int) -> None:
        self.report.reduction_started(count_tokens(emit_script(self.case)))

    def pass_started(self, name: str) -> None:
        self.report.pass_started(name)

    def accepted(self, text: str, size: int, pass_name: str) -> None:
        self.case = self._rendered.get(text, self.case)
        self.report.accepted(text, count_tokens(text), pass_name)
