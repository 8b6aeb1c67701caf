"""The ``inplace`` oracle: a tensor saved for backward changed without its version counter noticing."""

from __future__ import annotations

from oracles.bug import Bug
from oracles.api import NEEDS_SAVED_TENSORS, RecordedRun, Verdict, oracle


@oracle("inplace", needs={NEEDS_SAVED_TENSORS})
def inplace(run: RecordedRun) -> Verdict:
    """A tensor saved for backward was modified in place without a version bump; signature: its grad_fn.

    Signature: ``inplace: <grad_fn>``, the backward node that unpacked the corrupted tensor (``TanhBackward0``,
    ``CompiledFunctionBackward``, ``unknown`` when it was unpacked outside a backward pass), of the first
    violation recorded. Autograd's own version check catches bumped versions; this catches the silent ones
    (``.data`` writes, kernels writing into their inputs), which give wrong gradients without an error.
    """

    if not run.inplace_violations:
        return Verdict(False, detail="no saved tensor changed behind autograd's back")
    first = run.inplace_violations[0]
    more = len(run.inplace_violations) - 1
    detail = first.detail + (f" (and {more} more)" if more else "")
    words = f"a tensor saved for backward by {first.grad_fn} is modified in place (silently wrong gradients)"
    return Verdict(True, detail=detail, bug=Bug(f"inplace: {first.grad_fn}", words=words))
