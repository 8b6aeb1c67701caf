"""The ``hang`` oracle: a compiled call that does not finish while its eager run did (compilers hang too).

A hang cannot be judged inside the run that hangs: the run never gets to its oracles. So the harness leaves a
mark while a compiled call is under way (its eager side done, see ``Harness.phase_file``), and the parent,
when it kills a run at its time limit, reads the mark (``RunResult.verdict``). Inside a run that finished,
this oracle has nothing to say.
"""

from __future__ import annotations

from oracles.api import NEEDS_CALLS, RecordedRun, Verdict, oracle

SIGNATURE = "hang: a compiled call did not finish (its eager run did)"
IN_COMPILED_CALL = "compiled call: "


@oracle("hang", needs={NEEDS_CALLS})
def hang(run: RecordedRun) -> Verdict:
    """Fires (in the parent) when the run was killed at its time limit inside a compiled call whose eager side
    had finished. The signature names the backend (a slow compile by another backend is not the same hang),
    not the call, whose name changes as the script shrinks."""

    return Verdict(False, detail="every compiled call finished")


def verdict_of_timeout(phase: str) -> Verdict:
    """The verdict on a run killed at its time limit, from the harness's last mark ``phase``."""

    if phase.startswith(IN_COMPILED_CALL):
        backend, _, target = phase[len(IN_COMPILED_CALL) :].partition("|")
        return Verdict(True, f"{SIGNATURE} [backend {backend}]", f"in the compiled call of {target}")
    return Verdict(False, detail="timed out outside any compiled call")
