"""The ``crash`` oracle: one side of a compiled call raises and the other does not."""

from __future__ import annotations

from oracles.bug import Bug
from oracles.api import NEEDS_CALLS, ExceptionInfo, RecordedRun, Verdict, oracle
from oracles.signature import exception_signature


@oracle("crash", needs={NEEDS_CALLS})
def crash(run: RecordedRun) -> Verdict:
    """A compiled call raises where eager does not (or the reverse); signature: side, exception, stage.

    Signature: ``crash: compiled raised: <Type>: <normalized message> [<stage>]`` (``eager raised`` for the
    reverse; ``compiled backward raised`` / ``eager backward raised`` when only the recorded gradients failed;
    `` [<stage>]`` only when the stage is known). The first call that crashes in its forward decides; backward
    crashes count only when no forward crashed. When no recorded call shows the compiled side failing but the
    exception that escaped the script arose inside the compiler (``torch.compile`` itself raised, or a compiled
    backward raised in the script's own ``.backward()``), that exception is reported as ``compiled raised``.
    """

    for call in run.calls:
        eager, compiled = call.eager.exception, call.compiled.exception
        if (eager is None) != (compiled is None):
            side, exc = ("compiled", compiled) if compiled is not None else ("eager", eager)
            return _fires(f"{side} raised", exc, f"call {call.index} of {call.target}")
    for call in run.calls:
        if call.eager.exception is not None or call.compiled.exception is not None:
            continue
        eager, compiled = call.eager.grad_exception, call.compiled.grad_exception
        if (eager is None) != (compiled is None):
            side, exc = ("compiled", compiled) if compiled is not None else ("eager", eager)
            return _fires(f"{side} backward raised", exc, f"gradients of call {call.index} of {call.target}")
    escaped = run.exception
    if (
        escaped is not None
        and escaped.stage is not None
        and run.used_compile
        and not any(call.compiled.exception is not None for call in run.calls)
    ):
        return _fires("compiled raised", escaped, "raised by the compiler outside any recorded call")
    return Verdict(False, detail=f"no one-sided exception in {len(run.calls)} compiled calls")


_WORDS = {
    "compiled raised": "the compiled call raises", "eager raised": "the compiled call runs where eager raises",
    "compiled backward raised": "the compiled backward raises",
    "eager backward raised": "the compiled backward runs where eager's raises",
}


def _fires(what: str, exc: ExceptionInfo, where: str) -> Verdict:
    stage = f" [{exc.stage}]" if exc.stage else ""
    first_line = exc.message.strip().splitlines()[0][:200] if exc.message.strip() else ""
    bug = Bug(
        f"crash: {what}: {exception_signature(exc)}{stage}", exception=exc.type, raised_by=what.removesuffix(" raised"),
        stage=exc.stage, words=f"{_WORDS[what]}: {exc.type}: {first_line}",
    )
    return Verdict(True, detail=f"{where}: {exc.type}: {first_line}", bug=bug)
