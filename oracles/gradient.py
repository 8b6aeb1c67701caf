"""The ``gradient`` oracle: gradients through a compiled call differ from eager's beyond the fp64-relative rule."""

from __future__ import annotations

from oracles.bug import Bug
from oracles.api import NEEDS_CALLS, NEEDS_GRADS, NEEDS_REFERENCE, RecordedRun, Verdict, oracle
from oracles.numerical import Mismatch, calls_of_their_targets, compare_tensors, dtype_name, worst


@oracle("gradient", needs={NEEDS_CALLS, NEEDS_REFERENCE, NEEDS_GRADS}, reads_only_calls=True)
def gradient(run: RecordedRun) -> Verdict:
    """Gradients of inputs or parameters differ between eager and compiled (same rule as ``numerical``).

    The harness differentiates a fixed random weighting of each side's floating outputs with
    ``torch.autograd.grad``; each gradient is judged like a ``numerical`` output against the float64
    reference's gradient. A gradient that exists on one side only is kind ``missing``.

    Signature: ``gradient: <input|parameter> <dtype> <kind>`` (kind ``nan``, ``inf``, ``value``, ``shape``,
    ``dtype``, ``missing``); which input or parameter and the numbers are in the detail. Calls where a
    forward or a gradient computation raised, or where no output required grad, are skipped.
    """

    findings: list[tuple[Mismatch, str, str, int]] = []
    ordinal = calls_of_their_targets(run.calls)
    for call in run.calls:
        eager, compiled = call.eager.grads, call.compiled.grads
        if eager is None or compiled is None or len(eager) != len(compiled):
            continue
        reference = call.reference.grads if call.reference is not None else None
        if reference is not None and len(reference) != len(eager):
            reference = None
        names = call.grad_names if len(call.grad_names) == len(eager) else [f"?:{i}" for i in range(len(eager))]
        for i, (e, c) in enumerate(zip(eager, compiled)):
            where = f"call {call.index} of {call.target}, {names[i]}"
            source = "parameter" if names[i].startswith("parameter:") else "input"
            if e is None and c is None:
                continue
            if e is None or c is None:
                present = c if e is None else e
                side = "compiled" if e is None else "eager"
                missing = Mismatch("missing", dtype_name(present.dtype), f"only {side} has a gradient")
                findings.append((missing, where, source, ordinal[id(call)]))
                continue
            found = compare_tensors(e, c, reference[i] if reference is not None else None)
            if found is not None:
                findings.append((found, where, source, ordinal[id(call)]))
    if not findings:
        return Verdict(False, detail=f"gradients agree in {len(run.calls)} compiled calls")
    found, where, source, index = worst(findings)
    bug = Bug(f"gradient: {source} {found.dtype} {found.kind}", gradient_of=source, call=index,
              words=f"compiled gradients of {source}s differ from eager ({found.in_words()}) at {where}: {found.detail}")
    return Verdict(True, detail=f"{where}: {found.detail}", bug=bug)
