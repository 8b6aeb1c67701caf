"""The ``script`` oracle: the script itself fails, the way the original failed."""

from __future__ import annotations

from oracles.api import NEEDS_EAGER_RERUN, RecordedRun, Verdict, oracle
from oracles.signature import exception_signature


@oracle("script", needs={NEEDS_EAGER_RERUN})
def script(run: RecordedRun) -> Verdict:
    """The script raises (an exception or a failed assert); the signature is its type and normalized message.

    When the script calls torch.compile, the failure must go away with torch.compile replaced by the identity,
    and the signature says so: a candidate that fails without the compiler, or no longer compiles anything,
    has lost the compiler bug and shows a different signature.
    """

    if run.exception is None:
        return Verdict(False, detail="the script ran to the end")
    signature = exception_signature(run.exception)
    message = run.exception.message.strip()
    detail = message.splitlines()[0][:200] if message else ""
    if not run.used_compile:
        return Verdict(True, signature, detail)
    if not run.eager_rerun_done:
        return Verdict(False, signature, "torch.compile was used but the eager re-run was not recorded")
    rerun = run.eager_rerun_exception
    if rerun is not None and exception_signature(rerun) == signature:
        return Verdict(False, signature, "fails the same way without torch.compile")
    return Verdict(True, f"{signature} [only under torch.compile]", detail)
