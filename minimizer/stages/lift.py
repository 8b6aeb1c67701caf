"""Stage 3, lift: where the failing compiled call is buried in the program, or runs a library's model, the
program lifted to that call.

Real programs bury the compiled call: inside a training step, an evaluation loop over a table of cases, a helper
called from a comprehension, behind a ``global f; f = torch.compile(f)``. No statement can then reach the call's
output to state the bug, so every candidate must keep the script's own check, and with it whatever lies between
the call and the check (the loop, the table, the optimizer, the comparison). Passes that each learn one more
syntactic shape stay one shape behind real programs; the harness knows at run time which call failed and with
what. So the lift asks the run itself: the graphs the compiled calls handed the compiler, with their inputs'
shapes, dtypes, devices and ``requires_grad`` and the ``torch.compile`` options, are recorded in one run
(``graph.capture``), and the graph that shows the bug on its own is emitted as a standalone program
(``graph.emit``): the graph reducer's recording and emitter, taken first. Whatever it does not show, the source
reducer reduces the program as it is. A call at module level whose model lives in a library is lifted too:
the source reducer cannot see into the library, and every one of its candidates pays the library's import.

A bug in Dynamo's tracing is already in the graph it records (a wrong branch, a wrong ``requires_grad``): no
recorded graph shows it. The same run recorded each compiled function's calls, and the source lift
(``source.lift``) writes the function's own source called once with arguments like those: where no graph shows
the bug, that program is reduced instead.
"""

from __future__ import annotations

import ast
import time
from typing import TYPE_CHECKING

from minimizer.metrics import count_tokens, measure
from minimizer.reduce.keys import candidate_key
from minimizer.reduce.scheduler import OutOfTime
from minimizer.source.statement import compiled_function_call, has_place
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.pin import Target
from minimizer.stages.reducers import reduce_graph_safely, reduce_source, smaller_of
from oracles.bug import Bug
from oracles.stages import STAGES

if TYPE_CHECKING:
    from minimizer.graph.capture import Recording
    from minimizer.runner.run_types import RunSettings
    from minimizer.runs import Runs

# Oracles a captured graph cannot show: a kernel's write into a saved tensor, a compile that never returns.
_NOT_IN_A_GRAPH = frozenset({"inplace", "hang"})
# Graphs this small are read as quickly in the script as in a lifted repro.
_FEW_OPERATORS = 20


def is_buried(text: str, target: Target) -> bool:
    """Whether ``text`` compiles a call that no statement can reach to state the bug (see ``has_place``), for a
    bug a captured graph can show."""

    return _compiles(text, target) and shown_by_a_graph(target) and not has_place(text)


def lifts_from_source(text: str, target: Target) -> bool:
    """Whether ``text`` compiles a call that no statement can reach, for a bug the compiled function's own source,
    called once, can show (see ``source.lift``): a crash in Dynamo's tracing too."""

    return can_lift_a_call(text, target) and not has_place(text)


def can_lift_a_call(text: str, target: Target) -> bool:
    """Whether ``text`` compiles a call, for a bug the compiled function's own source, called once, can show."""

    return _compiles(text, target) and _shown_by_a_call(target)


def lives_elsewhere(text: str, operators_captured: int | None, target: Target) -> bool:
    """Whether the compiled model's code lives outside the script (a library's model), for a bug a captured graph
    can show: its graphs held more than twice the operators the script shows. The source reducer would spend
    its candidates importing the library and deleting the script around one call it cannot see into."""

    if operators_captured is None or not _compiles(text, target) or not shown_by_a_graph(target):
        return False
    return operators_captured > max(2 * measure(text).torch_ops, _FEW_OPERATORS)


def _compiles(text: str, target: Target) -> bool:
    """Whether the program's failing run compiled anything: a ``script`` signature says whether it did (a script
    that checks its own Triton kernel, whose docstring says "compile", has no compiled call to lift)."""

    if target.spec == "script" and target.bug.under_compile is None:
        return False
    return "compile" in text


def shown_by_a_graph(target: Target) -> bool:
    """Whether the lifted graph can show the bug: it runs the recorded graph compiled, then eagerly, and compares
    the outputs. A crash in Dynamo's own tracing happens before any graph reaches the compiler."""

    return _shown_by_a_call(target) and not (target.spec == "crash" and _in_dynamo_tracing(target.bug))


def _shown_by_a_call(target: Target) -> bool:
    """Whether a lifted program, which calls the compiled callable and compares it with eager, can show the bug.
    Not eager raising (a reverse crash raises on both sides), nor a script failing by anything but a check of
    its own (``autograd.grad`` raising after the call, say, fails outside the call; ``if not ok: raise`` is a
    check, as an assert is)."""

    spec, bug = target.spec, target.bug
    if spec in _NOT_IN_A_GRAPH:
        return False
    if spec == "crash":
        return bug.raised_by != "eager"
    return spec != "script" or bug.is_assertion or target.by_a_check


def _in_dynamo_tracing(bug: Bug) -> bool:
    """Whether a crash arose while Dynamo traced (no graph reached a compiler): by the stage the crash oracle
    named, else by an exception of Dynamo's own. A backend that raised (``BackendCompilerFailed``, stage
    ``backend-compile``) was handed its graph: the lift shows that."""

    if bug.stage in STAGES:
        return bug.stage == "dynamo-tracing"
    exception = bug.exception or ""
    return exception.startswith("torch._dynamo.exc.") and "BackendCompilerFailed" not in exception


def recorded_run(
    runs: Runs, text: str, settings: RunSettings, why: str, wanted_call: int | None = None
) -> Recording | None:
    """The graphs ``text``'s compiled calls handed the compiler and the calls of its compiled functions, recorded
    in one run (``wanted_call``: the call the bug showed in, ``Bug.call``, among them); ``None`` if it recorded
    nothing."""

    from minimizer.graph.capture import CaptureFailed, capture_recording

    runs.progress.message(f"{why}: lifting the failing call out of the recorded run")
    try:
        recording = capture_recording(text, settings, wanted_call=wanted_call)
    except CaptureFailed as exc:
        runs.progress.message(f"cannot lift: {exc}; reducing the program as it is")
        return None
    return recording if recording.graphs or recording.calls else None


def why_lift(runs: Runs, text: str, target: Target) -> str | None:
    """Why the program is lifted to its failing call first (``stages.lift``), or ``None``."""

    if is_buried(text, target) or lifts_from_source(text, target):
        return "the compiled call is buried in the program"
    if lives_elsewhere(text, runs.operators_captured.get(candidate_key(text)), target):
        return "the compiled model's code lives outside the script"
    return None


# The lift's share of the time left: a graph too large to reduce in it (a library's mixture-of-experts layer of
# hundreds of nodes) leaves the rest to the source reducer rather than ending with the program as it was.
_LIFT_SHARE = 0.5


def lift(
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
        lifted = reduce_graph_safely(runs, text, target, settings, best, share, captured, polish_until=deadline)
    except OutOfTime:
        if best.best_text != text or (deadline is not None and time.monotonic() >= deadline):
            raise  # the best so far is a lifted repro, or no time is left: it stands
        runs.progress.message("the lift used its share of the time without a smaller repro: reducing the program as it is")
        return None
    if lifted == text:
        runs.progress.message("no recorded graph shows the bug on its own: reducing the program as it is")
        return None
    return lifted


def lifted_if_smaller(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """Where the source reducer's repro still builds its compiled call's arguments from the script's own objects
    (a store class and its config around `score(store.queries(), store.keys)`), the call as the run recorded it,
    lifted (``source.lift``) where that program is already smaller, then reduced: the smaller of the two repros.
    One capture run, only where the compiled function with what it reads is well smaller than the repro."""

    if not can_lift_a_call(text, target) or not _a_lifted_call_may_be_smaller(text):
        return text
    recording = recorded_run(runs, text, settings, "the repro is larger than a lifted call", wanted_call=target.bug.call)
    if recording is None or not recording.calls:
        return text
    smaller_than = count_tokens(text)
    lifted = lambda: _lift_source(runs, text, target, settings, best, deadline, recording.calls, smaller_than) or text  # noqa: E731
    return smaller_of(runs, best, target, text, lifted, stage="lifted call")


# What a lifted call's program takes besides its function, about: a line per argument, the compiled call and its
# check; and how much smaller than the repro that must be for a capture run to pay.
_TOKENS_PER_ARGUMENT, _CALL_TOKENS, _WORTH_IT = 12, 25, 1.25


def _a_lifted_call_may_be_smaller(text: str) -> bool:
    """Whether the program a lifted call would be, estimated without a run (the script's top-level function its
    placed call compiles, carried with what it reads, a line per argument and the call), is well smaller than
    ``text``: the repro builds the arguments from things of its own (a store class, a config) the lift needs not."""

    from minimizer.graph.prelude import prelude_from_script
    from minimizer.syntax import parse_python

    call = compiled_function_call(text)
    try:
        tree = parse_python(text)
    except SyntaxError:
        return False
    if call is None or not any(isinstance(s, ast.FunctionDef) and s.name == call[0] for s in tree.body):
        return False
    estimate = count_tokens(prelude_from_script(text, {call[0]})) + _TOKENS_PER_ARGUMENT * call[1] + _CALL_TOKENS
    return _WORTH_IT * estimate < count_tokens(text)


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
            reduced = reduce_source(runs, program, lifted_target, settings, best, deadline)
            target.bug = lifted_target.bug
            return reduced
    runs.progress.message("no recorded call shows the bug on its own: reducing the program as it is")
    return None
