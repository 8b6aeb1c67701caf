"""Stage 4, reduce: the source reducer (then once more on the Triton kernels a failing comparison checks, with
the values compared held), and, where the model lives outside the script, the FX-graph reducer.

Every candidate is kept only while it shows the pinned bug (``Runs.still_fails``); the best so far is on disk
after every step that made it smaller (``BestSoFar``).
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from typing import TYPE_CHECKING, Callable

from minimizer.metrics import count_tokens, measure
from minimizer.reduce.keys import candidate_key
from minimizer.reduce.scheduler import OutOfTime, Reducer
from minimizer.reduce.tester import Tester, speculation_for
from minimizer.runner.gpus import usable_cores
from minimizer.runner.run_types import RunSettings
from minimizer.source.frozen import FrozenKernels, GuardedMasks
from minimizer.source.statement import StatementPlace
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.lift import can_lift_a_call, is_buried, lifts_from_source, lives_elsewhere, recorded_run, shown_by_a_graph
from minimizer.stages.pin import Pinned, Target
from minimizer.stages.state import Statement
from oracles.api import NEEDS_CALLS
from oracles.bug import same_bug
from oracles.kernel_replay import asking
from oracles.registry import load_oracle
from oracles.script import SAME_COMPARISON, SAME_DIFFERENCE

if TYPE_CHECKING:
    from minimizer.runs import Runs


def reduce_script(runs: Runs, pinned: Pinned, best: BestSoFar, deadline: float | None) -> str:
    """The smallest script the reducers the ``reducer`` option asks for reach by ``deadline`` (``None``: no
    limit). Out of time, the best so far; on Ctrl-C, the best so far is written (formatted) before it goes on."""

    reducer = runs.options.reducer
    text = runs.source
    target, settings = pinned.target, pinned.settings
    try:
        why = _why_lift(runs, text, target) if reducer == "auto" else None
        lifted = _lift(runs, text, target, settings, best, deadline, why) if why else None
        if lifted is not None:
            text = lifted
        else:
            if reducer in ("source", "auto"):
                text = _source_stages(runs, text, target, settings, best, deadline)
            if reducer == "auto":
                text = _lifted_if_smaller(runs, text, target, settings, best, deadline)
            captured = _graphs_if_they_pay(runs, text, target, settings) if reducer == "auto" else None
            if reducer == "graph":
                text = _reduce_graph_safely(runs, text, target, settings, best, deadline, captured, polish_until=deadline)
            elif captured:
                text = _smaller_of(runs, best, target, text, lambda: _reduce_graph_safely(
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


def polish_the_statement(runs: Runs, statement: Statement, pinned: Pinned, best: BestSoFar, deadline: float | None) -> str:
    """The stated repro reduced once more, where the statement wrote the script's check anew: the check the
    reduction had to keep (a loop over cases collecting mismatches, a dict of outputs read at one key) is now
    one comparison of the compiled call, and the code only the old check needed can go. Within the
    reduction's deadline; the stated text where no time is left or nothing goes."""

    if not statement.stated or runs.options.reducer == "graph" or not _check_written_anew(statement):
        return statement.text
    if deadline is not None and time.monotonic() >= deadline:
        return statement.text
    best.restart_from(statement.text)
    try:
        return _reduce_source(runs, statement.text, pinned.target, pinned.settings, best, deadline, named="source (stated)")
    except OutOfTime:
        best.work.stopped_early = True
        return best.best_text
    except KeyboardInterrupt:
        best.write_interrupted()
        raise


def _check_written_anew(statement: Statement) -> bool:
    """Whether the statement took lines of the reduced step out besides the compiled call's own: what the
    script did after the call to check it (a comparison per key, a list of mismatches asserted empty)."""

    stated = {line.strip() for line in statement.text.splitlines()}
    return any(
        line.strip() not in stated and "compile" not in line for line in statement.step.splitlines() if line.strip()
    )


def _source_stages(runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None) -> str:
    """The source reducer; the tensors a compared kernel is given as factories; the compared kernels with the
    values compared held, then with their references; where the references changed with them, the source
    reducer once more (the kernels as they are now): a reference reduced leaves tensors unused and a helper
    that ran the kernel or the reference by a flag called once; then the compared kernels' launches; and where
    any of these changed the script since the source reducer last ran, the source reducer once more (a launch's
    grid left in a name, `n = x.numel()`, that no kernel stage inlines)."""

    text = settled = _reduce_source(runs, text, target, settings, best, deadline)
    text = _tensors_as_factories(runs, text, target, settings, best, deadline)
    text = _reduce_compared_kernels(runs, text, target, settings, best, deadline)
    paired = _reduce_kernels_with_their_references(runs, text, target, settings, best, deadline)
    if paired != text:
        text = settled = _reduce_source(runs, paired, target, settings, best, deadline, named=None)
    text = _reduce_launches(runs, text, target, settings, best, deadline)
    return text if text == settled else _reduce_source(runs, text, target, settings, best, deadline, named=None)


def _smaller_of(
    runs: Runs, best: BestSoFar, target: Target, source_repro: str, graph_repro: Callable[[], str], stage: str = "graph stage"
) -> str:
    """The ``stage``'s repro (the graph's, a lifted call's), or the source reducer's where that is smaller: tokens
    first; at equal size the stage's, which needs only torch (and the user's backend), not the library the model
    came from."""

    reducers, bug = list(best.work.reducers), target.bug
    graph = graph_repro()
    if graph == source_repro or count_tokens(graph) <= count_tokens(source_repro):
        return graph
    runs.progress.message(
        f"the {stage}'s repro ({count_tokens(graph)} tokens) is larger than the source reducer's "
        f"({count_tokens(source_repro)}): keeping the source reducer's"
    )
    best.work.reducers, target.bug = reducers, bug
    return source_repro


def _reduce_source(
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


def _reduce_compared_kernels(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The kernels a failing comparison checks, which the source reducer left as they were, reduced with the
    values compared held (``oracles.script.same_comparison``): an edit that computes the same numbers where the
    script compares them keeps the bug (a hand-written repro drops a weight of ones, binds ``eps=0.0``), if it
    keeps the kernel's masks and its masked loads' ``other`` values as they were given where a mask may be the
    bug's line (``GuardedMasks``). The
    pinned signature is then the repro's own: which pointers a kernel reads past may have changed with its
    parameters."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    with tempfile.TemporaryDirectory(prefix="minimizer-launches-") as folder:
        replayed = _first_launches_recorded(runs, target, settings, os.path.join(folder, "launches.pt"))
        return _reduce_held_kernels(runs, text, target, settings, replayed, best, deadline)


def _first_launches_recorded(runs: Runs, target: Target, settings: RunSettings, path: str) -> RunSettings:
    """The settings of the stage for compared kernels: the values compared held, and each candidate's kernels
    replaying the original program's first launch of theirs (``oracles.kernel_replay``), recorded into ``path``
    by one run of the original now."""

    kernels = list(target.bug.compared_kernels)
    held = dataclasses.replace(settings, oracles=(SAME_COMPARISON,))
    runs.run(runs.source, dataclasses.replace(held, env=(*settings.env, asking("record", path, kernels))))
    if not os.path.exists(path):
        runs.progress.message("the original's first kernel launches are too large to replay: holding the values compared alone")
    return dataclasses.replace(held, env=(*settings.env, asking("replay", path, kernels)))


def _reduce_held_kernels(
    runs: Runs, text: str, target: Target, settings: RunSettings, held_settings: RunSettings, best: BestSoFar,
    deadline: float | None,
) -> str:
    held = _HeldRound(
        "kernels", SAME_COMPARISON, held_settings, _kernel_passes(), subject="the compared kernels",
        varies="the values it compares differ from run to run",
        says="reducing the compared kernels, with the values the script compares held",
    )
    return _reduce_held(runs, text, target, settings, best, deadline, held)


def _reduce_kernels_with_their_references(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The compared kernels and the references they are compared with, reduced together where both apply an
    operation alike (``source.passes.kernels.paired``), with how the values compared differ held
    (``oracles.script.same_difference``); the kernels' other lines stay (no step's leftovers are swept: the line
    a fix mends may read them)."""

    from minimizer.source.passes.kernels.paired import bypass_alike_operators

    return _reduce_with_difference_held(
        runs, text, target, settings, best, deadline, "kernels with references", [bypass_alike_operators],
        subject="the compared kernels and their references",
        says="reducing the compared kernels with their references, with how their values differ held",
    )


def _reduce_launches(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The compared kernels' launches as a person writes them by hand, once every size is what it will be: one
    program over the elements (``source.passes.kernels.launches``), its block size bound (no other parameter: the line a
    fix mends may read it), masks that fence nothing dropped, the one program's index (``row = 0``) inlined and
    the arithmetic it leaves folded (``0 * 2 + cols`` -> ``cols``), the temporaries a kernel binds once and reads
    once inlined (not a name bound again: its steps are lines a fix may mend), a block of one element read as its
    scalar; with how the values compared differ held, as for the references."""

    from minimizer.source.passes.values.constants import fold_integer_arithmetic
    from minimizer.source.passes.names.inline import inline_kernel_temporaries, inline_literal_names
    from minimizer.source.passes.kernels.memory import drop_kernel_masks, one_element_blocks_as_scalars
    from minimizer.source.passes.names.known_shapes import fold_known_shapes
    from minimizer.source.passes.kernels.launches import block_sizes_only, launches_as_run
    from minimizer.source.passes.signatures.parameters import bind_constant_parameters

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    failed = runs.run(text, settings).exception  # the grids its launches had
    one_program = launches_as_run(dict(failed.launch_grids) if failed is not None else {})
    return _reduce_with_difference_held(
        runs, text, target, settings, best, deadline, "kernel launches",
        [fold_known_shapes, one_program, drop_kernel_masks, block_sizes_only(bind_constant_parameters),
         inline_literal_names, fold_integer_arithmetic, inline_kernel_temporaries, one_element_blocks_as_scalars],
        subject="the compared kernels' launches", says="making each compared kernel's launch one program",
    )


def _reduce_with_difference_held(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None,
    name: str, passes: list, *, subject: str, says: str,
) -> str:
    """A held round of ``passes`` (and the unused parameters and definitions they leave, kernels' lines kept)
    with how the values compared differ held, where the script compares a kernel's output."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    from minimizer.reduce.scheduler import Pass
    from minimizer.source.passes.statements.dead_code import remove_unused_definitions
    from minimizer.source.passes.kernels.paired import kernel_bodies_kept
    from minimizer.source.passes.signatures.parameters import remove_unused_parameters

    passes = [*passes, remove_unused_parameters, kernel_bodies_kept(remove_unused_definitions)]
    held = _HeldRound(
        name, SAME_DIFFERENCE, dataclasses.replace(settings, oracles=(SAME_DIFFERENCE,)), [Pass.of(p) for p in passes],
        subject=subject, varies="how the values differ changes from run to run", says=says, leftovers=False,
    )
    return _reduce_held(runs, text, target, settings, best, deadline, held)


@dataclasses.dataclass(frozen=True)
class _HeldRound:
    """A round of the source reducer on the compared kernels with the bug held tighter than by the script's
    signature (``spec``, run with ``settings``); ``name``: how the report's reducers name it."""

    name: str
    spec: str
    settings: RunSettings
    passes: list
    subject: str  # what stays as it is where nothing holds
    varies: str  # why nothing holds where two runs of the start differ
    says: str  # what the progress says as the round starts
    leftovers: bool = True


def _reduce_held(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, held: _HeldRound
) -> str:
    """``held``'s round from ``text``; the pinned signature then the repro's own (which pointers a kernel reads
    past, what it is compared with, may have changed)."""

    # Twice: a kernel whose values vary from run to run (atomics) holds nothing.
    first, again = (r.verdict(held.spec) for r in runs.call_all([lambda: runs.run(text, held.settings)] * 2))
    if not first.fires or not same_bug(first.found, again.found):
        runs.progress.message(f"{held.subject} stay as they are: {first.detail if not first.fires else held.varies}")
        return text
    runs.progress.message(held.says)
    held_target = Target(held.spec, first.found, target.own_failure, operator=target.operator)
    try:
        reduced = _reduce_source(
            runs, text, held_target, held.settings, best, deadline, kept=GuardedMasks.of(text, target.bug),
            named=None, passes=held.passes, leftovers=held.leftovers,
        )
    except OutOfTime:
        best.work.reducers.append(held.name)
        _repin(runs, best.best_text, target, settings)
        raise
    best.work.reducers += [held.name] if reduced != text else []
    _repin(runs, reduced, target, settings)
    return reduced


# A compared kernel's lines stay lines: an assignment merged into the next (`out = res + alpha * x; out = out + res`
# read as one expression) computes the same, but the line its author must mend is then no longer a line of it.
_MERGING_PASSES = frozenset({"inline_single_use_variables"})


def _kernel_passes() -> list:
    from minimizer.source.format import source_passes

    return [p for p in source_passes() if p.name not in _MERGING_PASSES]


def _tensors_as_factories(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """Where a kernel's output is compared, each tensor the script computed at module level tried as a factory of
    the shape, dtype and device the run recorded (`source.passes.values.recorded`): the layers that made a kernel's
    input go, whatever they are, with what each step leaves unused."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    failed = runs.run(text, settings).exception
    if failed is None or not failed.module_tensors:
        return text
    from minimizer.reduce.scheduler import Pass
    from minimizer.source.passes.values.recorded import recorded_tensors_to_factories

    factories = Pass("recorded_tensors_to_factories", recorded_tensors_to_factories(failed.module_tensors))
    return _reduce_source(runs, text, target, settings, best, deadline, passes=[factories], named=None)


def _repin(runs: Runs, text: str, target: Target, settings: RunSettings) -> None:
    """Pin the bug as ``text`` shows it, where that is the same bug (see ``_reduce_compared_kernels``)."""

    verdict = runs.run(text, settings).verdict(target.spec)
    if verdict.fires and not same_bug(target.bug, verdict.found):
        runs.progress.message(f"pinned signature, as the repro shows it: {verdict.signature}")
        target.bug = verdict.found


def _why_lift(runs: Runs, text: str, target: Target) -> str | None:
    """Why the program is lifted to its failing call first (``stages.lift``), or ``None``."""

    if is_buried(text, target) or lifts_from_source(text, target):
        return "the compiled call is buried in the program"
    if lives_elsewhere(text, runs.operators_captured.get(candidate_key(text)), target):
        return "the compiled model's code lives outside the script"
    return None


# The lift's share of the time left: a graph too large to reduce in it (a library's mixture-of-experts layer of
# hundreds of nodes) leaves the rest to the source reducer rather than ending with the program as it was.
_LIFT_SHARE = 0.5


def _lift(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, why: str
) -> str | None:
    """The lift (``stages.lift``): the failing call's graph, reduced and emitted, then polished by the source
    reducer; where no recorded graph shows the bug on its own, the compiled function's source called once
    (``source.lift``); ``None`` where neither does."""

    recording = recorded_run(runs, text, settings, why, wanted_call=target.bug.call)
    if recording is None:
        return None
    if recording.graphs and shown_by_a_graph(target):
        lifted = _lift_graph(runs, text, target, settings, best, deadline, recording.graphs)
        if lifted is not None:
            return lifted
    if recording.calls and lifts_from_source(text, target):
        return _lift_source(runs, text, target, settings, best, deadline, recording.calls)
    return None


def _lift_graph(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, captured: list
) -> str | None:
    share = None if deadline is None else time.monotonic() + _LIFT_SHARE * max(0.0, deadline - time.monotonic())
    try:
        # The share bounds the graph's own reduction; polishing its script may take the rest.
        lifted = _reduce_graph_safely(runs, text, target, settings, best, share, captured, polish_until=deadline)
    except OutOfTime:
        if best.best_text != text or (deadline is not None and time.monotonic() >= deadline):
            raise  # the best so far is a lifted repro, or no time is left: it stands
        runs.progress.message("the lift used its share of the time without a smaller repro: reducing the program as it is")
        return None
    if lifted == text:
        runs.progress.message("no recorded graph shows the bug on its own: reducing the program as it is")
        return None
    return lifted


def _lifted_if_smaller(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """Where the source reducer's repro still builds its compiled call's arguments from the script's own objects
    (a store class and its config around `score(store.queries(), store.keys)`), the call as the run recorded it,
    lifted (``source.lift``) where that program is already smaller, then reduced: the smaller of the two repros.
    One capture run, only for a repro larger than a lifted call's program usually is."""

    if count_tokens(text) <= _WORTH_A_CAPTURE_TOKENS or not can_lift_a_call(text, target):
        return text
    recording = recorded_run(runs, text, settings, "the repro is larger than a lifted call", wanted_call=target.bug.call)
    if recording is None or not recording.calls:
        return text
    smaller_than = count_tokens(text)
    lifted = lambda: _lift_source(runs, text, target, settings, best, deadline, recording.calls, smaller_than) or text  # noqa: E731
    return _smaller_of(runs, best, target, text, lifted, stage="lifted call")


def _lift_source(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, calls: list,
    smaller_than: int | None = None,
) -> str | None:
    """The first recorded call (the last made first: a script fails after the call that misbehaved) whose lifted
    program shows the bug (and has fewer tokens than ``smaller_than``), reduced by the source reducer; ``None``
    where none does. Where the bug is the script's own check, the lifted program's comparison of the same
    compiled call stands for it (``lifted_signature``)."""

    from minimizer.source.lift import lifted_bug, lifted_program

    tried: set[str] = set()
    for call in reversed(calls):
        for exact in (False, True):
            program = lifted_program(text, call, check=target.spec == "script", exact=exact)
            if program is None or program in tried or smaller_than is not None and count_tokens(program) >= smaller_than:
                continue
            tried.add(program)
            verdict = runs.run(program, settings).verdict(target.spec)
            bug = lifted_bug(target.spec, target.bug, verdict)
            if bug is None:
                shown = f"a different failure: {verdict.signature[:160]}" if verdict.fires else "the oracle does not fire"
                runs.progress.message(f"the call of {call.target} on its own: {shown}")
                continue
            runs.progress.message(f"lifted the call of {call.target} out of the program: reducing its source")
            best.work.reducers.append("source lift")
            lifted_target = Target(target.spec, bug, operator=target.operator)
            reduced = _reduce_source(runs, program, lifted_target, settings, best, deadline)
            target.bug = lifted_target.bug
            return reduced
    runs.progress.message("no recorded call shows the bug on its own: reducing the program as it is")
    return None


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


def _reduce_graph_safely(
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
    # The emitted script stands alone: the model's code, wherever it lived, is now in the repro (``_smaller_of``
    # keeps the source reducer's script only where that is smaller).
    emitted_target = Target(target.spec, outcome.bug, operator=target.operator)
    polished = _reduce_source(runs, outcome.script, emitted_target, settings, best, polish_until)
    target.bug = emitted_target.bug
    return polished

