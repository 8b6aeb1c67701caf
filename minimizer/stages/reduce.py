"""Stage 4, reduce: the source reducer (then the stages for Triton kernels a failing comparison checks,
``stages.own_kernels``), where the program is lifted to its failing call first (``stages.lift``), and where the
model lives outside the script, the FX-graph reducer.

Every candidate is kept only while it shows the pinned bug (``Runs.still_fails``); the best so far is on disk
after every step that made it smaller (``BestSoFar``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from minimizer.metrics import count_tokens, measure
from minimizer.reduce.keys import candidate_key
from minimizer.reduce.scheduler import OutOfTime
from minimizer.runner.run_types import RunSettings
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.lift import lift, lifted_if_smaller, why_lift
from minimizer.stages.own_kernels import (
    reduce_compared_kernels, reduce_kernels_with_their_references, reduce_launches, tensors_as_factories,
)
from minimizer.stages.pin import Pinned, Target
from minimizer.stages.reducers import reduce_graph_safely, reduce_source, smaller_of

if TYPE_CHECKING:
    from minimizer.runs import Runs


def reduce_script(runs: Runs, pinned: Pinned, best: BestSoFar, deadline: float | None) -> str:
    """The smallest script the reducers the ``reducer`` option asks for reach by ``deadline`` (``None``: no
    limit). Out of time, the best so far; on Ctrl-C, the best so far is written (formatted) before it goes on."""

    reducer = runs.options.reducer
    text = runs.source
    target, settings = pinned.target, pinned.settings
    try:
        why = why_lift(runs, text, target) if reducer == "auto" else None
        lifted = lift(runs, text, target, settings, best, deadline, why) if why else None
        if lifted is not None:
            text = lifted
        else:
            if reducer in ("source", "auto"):
                text = _source_stages(runs, text, target, settings, best, deadline)
            if reducer == "auto":
                text = lifted_if_smaller(runs, text, target, settings, best, deadline)
            captured = _graphs_if_they_pay(runs, text, target, settings) if reducer == "auto" else None
            if reducer == "graph":
                text = reduce_graph_safely(runs, text, target, settings, best, deadline, captured, polish_until=deadline)
            elif captured:
                text = smaller_of(runs, best, target, text, lambda: reduce_graph_safely(
                    runs, text, target, settings, best, deadline, captured, polish_until=deadline
                ))
    except OutOfTime:
        best.work.stopped_early = True
        text = best.best_text
        runs.progress.message("time limit reached: keeping the best repro so far")
    except KeyboardInterrupt:
        best.write_interrupted()
        raise
    best.work.finish()
    return text


def _source_stages(runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None) -> str:
    """The source reducer; the tensors a compared kernel is given as factories; the compared kernels with the
    values compared held, then with their references; where the references changed with them, the source
    reducer once more (the kernels as they are now): a reference reduced leaves tensors unused and a helper
    that ran the kernel or the reference by a flag called once; then the compared kernels' launches; and where
    any of these changed the script since the source reducer last ran, the source reducer once more (a launch's
    grid left in a name, `n = x.numel()`, that no kernel stage inlines)."""

    text = settled = reduce_source(runs, text, target, settings, best, deadline)
    text = tensors_as_factories(runs, text, target, settings, best, deadline)
    text = reduce_compared_kernels(runs, text, target, settings, best, deadline)
    paired = reduce_kernels_with_their_references(runs, text, target, settings, best, deadline)
    if paired != text:
        text = settled = reduce_source(runs, paired, target, settings, best, deadline, named=None)
    text = reduce_launches(runs, text, target, settings, best, deadline)
    return text if text == settled else reduce_source(runs, text, target, settings, best, deadline, named=None)


# A repro this small is about what a lifted graph's program is: not worth a capture run to compare.
_WORTH_A_CAPTURE_TOKENS = 120


def _graphs_if_they_pay(runs: Runs, text: str, target: Target, settings: RunSettings) -> list | None:
    """The script's captured graphs if the graph reducer pays: a graph holds more operators than the script
    shows (the model lives elsewhere), or the program a graph is written as is already smaller than the source
    reducer's repro (a loop over cases, a config and a module class around one operator); else ``None``."""

    if target.spec == "inplace" or "compile" not in text:
        return None
    source_ops, source_tokens = measure(text).torch_ops, count_tokens(text)
    bound = runs.operators_captured.get(candidate_key(text))
    if bound is not None and bound <= source_ops and source_tokens <= _WORTH_A_CAPTURE_TOKENS:
        # No graph holds more than all of them together: no capture run needed to tell.
        runs.progress.message(
            f"compiled graphs hold at most {bound} operators, the script shows {source_ops}: "
            "the source reducer already sees the model"
        )
        return None
    from minimizer.graph.capture import CaptureFailed, capture_graphs, case_from_capture
    from minimizer.graph.case import operator_count
    from minimizer.graph.emit import emit_script

    try:
        captured = capture_graphs(text, settings)
    except CaptureFailed as exc:
        runs.progress.message(f"graph capture failed ({exc}); staying with the source reducer")
        return None
    cases = [case for case in (case_from_capture(graph) for graph in captured) if case is not None]
    graph_ops = max((operator_count(case) for case in cases), default=0)
    graph_tokens = min((count_tokens(emit_script(case)) for case in cases), default=source_tokens)
    pays = graph_ops > source_ops or graph_tokens < source_tokens
    runs.progress.message(
        f"compiled graphs hold {graph_ops} operators (written out, {graph_tokens} tokens), the script shows "
        f"{source_ops} ({source_tokens} tokens): "
        + ("reducing the graph" if pays else "the source reducer already sees the model")
    )
    return captured if pays else None
