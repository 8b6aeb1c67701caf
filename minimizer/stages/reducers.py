"""The two reducers, each run against a pinned bug: the libcst source reducer (its static screen, its tester,
every source pass until a round changes nothing) and the FX-graph reducer (then the source reducer on the script
it emits); and the smaller of two repros, where both ran.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Callable

from minimizer.metrics import count_tokens
from minimizer.reduce.keys import candidate_key
from minimizer.reduce.scheduler import OutOfTime, Reducer
from minimizer.reduce.tester import Tester, speculation_for
from minimizer.runner.gpus import usable_cores
from minimizer.runner.run_types import RunSettings
from minimizer.source.frozen import FrozenKernels, GuardedMasks
from minimizer.source.statement import StatementPlace
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.pin import Target
from oracles.api import NEEDS_CALLS
from oracles.registry import load_oracle

if TYPE_CHECKING:
    from minimizer.runs import Runs


def smaller_of(
    runs: Runs, best: BestSoFar, target: Target, source_repro: str, stage_repro: Callable[[], str], stage: str = "graph stage"
) -> str:
    """The ``stage``'s repro (the graph's, a lifted call's), or the source reducer's where that is smaller: tokens
    first; at equal size the stage's, which needs only torch (and the user's backend), not the library the model
    came from."""

    reducers, bug = list(best.work.reducers), target.bug
    other = stage_repro()
    if other == source_repro or count_tokens(other) <= count_tokens(source_repro):
        return other
    runs.progress.message(
        f"the {stage}'s repro ({count_tokens(other)} tokens) is larger than the source reducer's "
        f"({count_tokens(source_repro)}): keeping the source reducer's"
    )
    best.work.reducers, target.bug = reducers, bug
    return source_repro


def reduce_source(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, *,
    kept: FrozenKernels | GuardedMasks | None = None, passes: list | None = None, named: str | None = "source",
    leftovers: bool = True,
) -> str:
    """The libcst source reducer, run until a whole round of passes changes nothing; ``kept``: what of the kernels
    the failing comparison checks stays as it is (``source.frozen``; by default, all of them); ``passes``: these
    instead of every source pass; ``named``: how the report's ``reducers`` names it (``None``: the caller does);
    ``leftovers``: whether what a step left dead is removed right after it."""

    from minimizer.source.format import parse_module, render_module, source_passes, source_size
    from minimizer.source.passes import FOLLOW_UP
    from minimizer.reduce.offload import OffloadedScreen
    from minimizer.source.rendering import settled
    from minimizer.source.screen import SourceScreen
    from minimizer.source.viability import Viability

    compares_calls = NEEDS_CALLS in load_oracle(target.spec).needs
    screen = SourceScreen(
        Viability.of(text, oracle_compares_compiled_calls=compares_calls),
        StatementPlace(target.spec, target.bug),
        kept if kept is not None else FrozenKernels.of(text, target.bug),
    )
    jobs = runs.jobs
    # With several workers and cores to spare, helper processes screen candidates: the parent's CPU limits
    # throughput there. On a host with no spare cores they would only take CPU from the candidates.
    spare_cores = usable_cores() - jobs
    offloaded = OffloadedScreen(screen, workers=2) if jobs > 1 and spare_cores >= 4 else None
    # A verdict taken from another candidate says nothing of how this one's script ended (see _Target).
    share = target.own_failure is None
    tester: Tester = Tester(
        render_module,
        lambda candidate, cancel: runs.still_fails(
            candidate, dataclasses.replace(settings, share_verdicts=share and runs.sharing.enabled), target, cancel
        ),
        key=candidate_key,
        screen=lambda candidate: (offloaded or screen)(candidate, best.best_text),
        jobs=jobs,
        on_result=lambda _text, interesting, cached: runs.progress.tested(interesting, cached),
        screen_in_workers=offloaded is not None,
        speculation=speculation_for(best.report.device, runs.residents.in_use),
    )
    passes = passes or source_passes()
    best.work.add_stage(tester, passes)
    try:
        reducer = Reducer(
            passes, tester, source_size, best, deadline=deadline, follow_up=FOLLOW_UP if leftovers else None, settle=settled
        )
        best.work.reducers += [named] if named else []
        return render_module(reducer.reduce(parse_module(text)))
    finally:
        tester.close()
        if offloaded is not None:
            offloaded.close()
            best.work.screen_cpu_seconds += offloaded.cpu_seconds


def reduce_graph_safely(
    runs: Runs,
    text: str,
    target: Target,
    settings: RunSettings,
    best: BestSoFar,
    deadline: float | None,
    captured: list | None,
    *,
    polish_until: float | None,
) -> str:
    """The graph stage is an extra: if it breaks on an unusual graph, the source result stands. ``deadline``
    bounds the graph's reduction, ``polish_until`` the source reducer's polishing of its script."""

    try:
        return _reduce_graph(runs, text, target, settings, best, (deadline, polish_until), captured)
    except (OutOfTime, KeyboardInterrupt):
        raise
    except Exception as exc:  # noqa: BLE001 - reported, and the best repro so far is kept
        runs.progress.message(f"graph reduction failed ({type(exc).__name__}: {exc}); keeping the source result")
        return text


def _reduce_graph(
    runs: Runs,
    text: str,
    target: Target,
    settings: RunSettings,
    best: BestSoFar,
    deadlines: tuple[float | None, float | None],
    captured: list | None,
) -> str:
    """The FX-graph reducer, then the source reducer on the script it emits; ``text`` if no graph shows the bug.
    ``deadlines``: the graph reducer's, the source reducer's."""

    deadline, polish_until = deadlines
    from minimizer.graph.reduce import reduce_graph

    outcome = reduce_graph(
        text,
        settings,
        target.spec,
        target.bug,
        jobs=runs.jobs,
        progress=best,
        deadline=deadline,
        run=runs.run,
        captured=captured,
        speculation=speculation_for(best.report.device, runs.residents.in_use),
        operator=target.operator,
    )
    best.work.oracle_calls += outcome.oracle_calls
    best.work.cache_hits += outcome.cache_hits
    best.work.passes += outcome.passes
    if outcome.script is None:
        runs.progress.message(f"graph reduction: {outcome.reason}")
        return text
    runs.progress.message(
        f"graph reduced from {outcome.operators_before} to {outcome.operators_after} operators; polishing its script"
    )
    best.work.reducers.append("graph")
    # The emitted script stands alone: the model's code, wherever it lived, is now in the repro (``smaller_of``
    # keeps the source reducer's script only where that is smaller).
    emitted_target = Target(target.spec, outcome.bug, operator=target.operator)
    polished = reduce_source(runs, outcome.script, emitted_target, settings, best, polish_until)
    target.bug = emitted_target.bug
    return polished
