"""The ``script`` oracle: the script itself fails, the way the original failed."""

from __future__ import annotations

import dataclasses

from oracles.api import NEEDS_EAGER_RERUN, NEEDS_EVIDENCE, NEEDS_KERNELS, ExceptionInfo, RecordedRun, Verdict, oracle
from oracles.bug import ALSO_WITHOUT_COMPILE as ALSO
from oracles.bug import ONLY_UNDER_COMPILE as ONLY
from oracles.bug import Bug
from oracles.comparison import measures_something_else, origin_in_words
from oracles.compared import kernels_compared
from oracles.signature import exception_signature, normalize_message


@oracle("script", needs={NEEDS_EAGER_RERUN, NEEDS_KERNELS, NEEDS_EVIDENCE})
def script(run: RecordedRun) -> Verdict:
    """The script raises (an exception or a failed assert); the signature is its type and normalized message.

    When the script calls torch.compile, the signature says whether the failure goes away with torch.compile
    replaced by the identity (``[only under torch.compile]``) or not (``[also without torch.compile]``: not a
    compiler bug; ``--oracle auto`` refuses to pin it, an explicit ``--oracle script`` reduces it anyway). A
    candidate that changes which, or no longer compiles anything, shows a different signature.

    A failed assert whose test reads names of what failed (``assert not mismatched``, with ``mismatched ==
    ["focal"]``) carries them (``[operands: mismatched=['focal']]``): a parity check that collects mismatches
    and asserts once fails with the same message for every one of them, and a candidate where another loss
    mismatches is another bug.

    A generic assert (nothing it reads names what failed) over several compiled calls can be held to the one
    whose misbehaviour fails it: a run that compiles only that target (``RecordedRun.only_compile``; the
    others run eagerly) says so in the signature (``[with only focal_loss compiled]``), and a candidate where
    the assert now fails because another compiled call misbehaves passes in such a run. Within one compiled
    call that returns every loss, the same holds for one of its outputs (``[with only all_losses output [1]
    compiled]``: that tensor from the compiled call, the others from its eager twin).

    The Triton kernels of the script that ran before the failure are part of the signature too: an assert that
    compares a kernel's output fails just as well when the kernel no longer runs (the output then holds
    whatever ``torch.empty`` gave), and that is not the same bug. Where such an assert compares tensors, where
    each comes from is too (``[compared: kernel row_softmax_kernel, softmax]``, see ``oracles.compared``): a
    candidate that compares the kernel's output with the reference's input instead fails the same way and is
    not the same bug. The kernels it compares are then left as they are (``minimizer.source.frozen``). Under
    Triton's interpreter, what the kernels read or wrote outside the tensors they were given is part of it too
    (``[out of bounds: rms_norm_kernel reads 1 past weight_ptr, 1 past x_ptr]``): a candidate whose tensors were shrunk
    apart from each other makes a correct kernel read past one of them, and that fails the comparison as well.
    """

    return _script_verdict(run, run.kernel_strays)


@oracle("oracles.script:same_comparison", needs={NEEDS_EAGER_RERUN, NEEDS_KERNELS, NEEDS_EVIDENCE})
def same_comparison(run: RecordedRun) -> Verdict:
    """``script``, held to the very values its failing comparison of a kernel's output compared
    (``[values: 3f2a...]``, a digest of each operand's dtype, shape and bytes).

    With those held, the kernel compared may change (``minimizer.source.frozen`` keeps it as it is otherwise): an
    edit that computes the same numbers where the script compares them (a weight of ones dropped, ``eps=0.0``
    bound, a parameter no longer read removed) keeps the bug; any other changes the values. Out-of-bounds
    accesses count by kernel and kind, not by pointer: a kernel that stopped reading its weight no longer
    reads past it. Pinned only by the reducer's stage for compared kernels (``minimizer.stages.own_kernels``).
    """

    values = run.exception.compared_values if run.exception is not None else None
    if values is None:
        return Verdict(False, detail="no comparison of a kernel's output whose values could be told")
    if run.kernel_replays:
        # Held values on shrunk inputs are not enough: the kernel must compute what the original's did on its
        # first launch (oracles.kernel_replay).
        return Verdict(False, detail=run.kernel_replays[0])
    verdict = _script_verdict(run, _strays_by_kernel(run))
    if not verdict.fires:
        return verdict
    return Verdict(True, detail=verdict.detail, bug=verdict.found.with_(held=f"[values: {values}]"))


@oracle("oracles.script:same_difference", needs={NEEDS_EAGER_RERUN, NEEDS_KERNELS, NEEDS_EVIDENCE})
def same_difference(run: RecordedRun) -> Verdict:
    """``script``, held to how the values of its failing comparison of a kernel's output differ, element by
    element (``[allclose: difference 5be0...]``, see ``oracles.comparison.difference_digest``), not to the values.

    With the difference held, the kernel and its reference may change together: an operation both sides apply
    alike (``x * scale + shift`` in the kernel, ``h * scale + shift`` in the reference, where the kernel's bug is
    in how it reads ``shift``) may go from both, which holding either side's values refuses. The comparison must
    still compare a kernel's output (its evidence names one); what else it compares is not part of the
    signature, since the reference's operations are what changes, save whether it is anything but more of the
    kernel's own output (``oracles.comparison.measures_something_else``). Pinned only by the reducer's stage for
    kernels and references reduced together (``minimizer.stages.own_kernels``).
    """

    if run.used_compile:
        return Verdict(False, detail="the script compiles: its compiled calls are not held by a difference")
    exception = run.exception
    difference = exception.compared_difference if exception is not None else None
    if difference is None or exception is None or not any(o.startswith("kernel ") for o in exception.evidence_origins):
        return Verdict(False, detail="no difference between a kernel's output and what it is compared with could be told")
    # What the output is compared with may change, but not to more of the kernel's own output: a difference
    # between two functions of it (`linear(out) - leaky_relu(out)`) checks the kernel against nothing.
    against = "" if measures_something_else(list(exception.evidence_origins)) else ", against nothing but its own output"
    bug = _failed_where(run, exception_signature(exception, evidence=True), _strays_by_kernel(run))
    return Verdict(True, bug=bug.with_(held=f"[{exception.evidence_kind}: difference {difference}{against}]"))


def _strays_by_kernel(run: RecordedRun) -> list[str]:
    """Out-of-bounds accesses by kernel and kind (``k reads``), not by pointer: a kernel that stopped reading its
    weight no longer reads past it."""

    return list(dict.fromkeys(" ".join(stray.split()[:2]) for stray in run.kernel_strays))


def _failed_where(run: RecordedRun, failure: str, strays: list[str]) -> Bug:
    """The bug of ``failure`` with what names where it failed: the names the assert read, the kernels that ran,
    what they read or wrote out of bounds."""

    exception = run.exception
    assert exception is not None
    operands = normalize_message(exception.operands) if exception.operands else None
    return Bug(
        failure, exception=exception.type, stage=exception.stage, operands=operands or None,
        kernels=tuple(sorted(run.kernels)), strays=tuple(strays),
    )


def _script_verdict(run: RecordedRun, strays: list[str]) -> Verdict:
    if run.exception is None:
        return Verdict(False, detail="the script ran to the end")
    exception = run.exception
    evidence = bool(exception.evidence)
    failure = exception_signature(as_spelled(exception), evidence=evidence)
    bug = _failed_where(run, failure, strays).with_(
        compared=exception.compared,
        compared_kernels=kernels_compared(exception.compared),
        comparison=exception.evidence, comparison_kind=exception.evidence_kind,
        comparison_origins=tuple(exception.evidence_origins), only_compile=run.only_compile,
    )
    message = exception.message.strip()
    detail = message.splitlines()[0][:200] if message else ""
    bug = bug.with_(words=_in_words(exception, detail))
    if not run.used_compile:
        return Verdict(True, detail=detail, bug=bug)
    if not run.eager_rerun_done:
        return Verdict(False, detail="torch.compile was used but the eager re-run was not recorded", bug=bug)
    rerun = run.eager_rerun_exception
    if rerun is not None and exception_signature(as_spelled(rerun), evidence=evidence) == failure:
        return Verdict(True, detail="fails the same way without torch.compile", bug=bug.with_(under_compile=ALSO))
    return Verdict(True, detail=detail, bug=bug.with_(under_compile=ONLY))


def as_spelled(exception: ExceptionInfo) -> ExceptionInfo:
    """``exception`` with its message as the script spells it, where the script formats it: what identifies the
    failure is the check's own words, not the values formatted into them (``ExceptionInfo.message_template``)."""

    if exception.message_template is None:
        return exception
    return dataclasses.replace(exception, message=exception.message_template)


def _in_words(exception: ExceptionInfo, message: str) -> str:
    """What fails, for people: the failing comparison where the run knows it, else the exception."""

    if exception.evidence_kind is not None:
        # The suspect's side first, whichever side of the comparison the script wrote it on.
        origins = sorted(exception.evidence_origins or ("?",), key=lambda o: not o.startswith(("compiled", "kernel ")))
        first, *rest = origins
        against = f" vs {origin_in_words(rest[0])}" if rest else ""
        difference = exception.evidence_difference
        gap = f", max abs diff {difference:.3g}" if difference is not None else ""
        return f"{exception.evidence_kind} fails: {origin_in_words(first)}{against}{gap}"
    return f"{exception.type}: {message}" if message else exception.type


SAME_COMPARISON = "oracles.script:same_comparison"
SAME_DIFFERENCE = "oracles.script:same_difference"
