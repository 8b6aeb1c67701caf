"""The ``script`` oracle: the script itself fails, the way the original failed."""

from __future__ import annotations

from oracles.api import NEEDS_EAGER_RERUN, RecordedRun, Verdict, oracle
from oracles.signature import exception_signature


@oracle("script", needs={NEEDS_EAGER_RERUN})
def script(run: RecordedRun) -> Verdict:
    """The script raises (an exception or a failed assert); the signature is its type and normalized message.

    When the script calls torch.compile, the failure must also go away with torch.compile replaced by the
    identity: a reduction that makes the script fail eagerly has lost the compiler bug.
    """

    if run.exception is None:
        return Verdict(False, detail="the script ran to the end")
    signature = exception_signature(run.exception)
    if run.used_compile and run.eager_rerun_done:
        rerun = run.eager_rerun_exception
        if rerun is not None and exception_signature(rerun) == signature:
            return Verdict(False, signature, "fails the same way without torch.compile")
    return Verdict(True, signature, run.exception.message.strip().splitlines()[0][:200] if run.exception.message.strip() else "")
