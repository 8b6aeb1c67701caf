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

from typing import TYPE_CHECKING

from minimizer.metrics import measure
from minimizer.source.statement import has_place
from minimizer.stages.pin import Target
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
