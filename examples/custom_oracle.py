"""A user-written oracle: output 0 of some compiled call differs from eager by more than 1e-2.

Use it in place of the built-in oracles:

    minimizer reduce bug.py --oracle examples/custom_oracle.py:output0_differs

The reducer then keeps only candidates in which at least one function or module passed to ``torch.compile``
returns a first output (in pytree order) that is further than 1e-2 (max absolute difference) from what the
same call returned eagerly. ``needs={NEEDS_CALLS}`` asks the harness to record the eager and compiled results
of each compiled call; the oracle itself runs nothing and can be unit-tested on a hand-made ``RecordedRun``.
"""

import torch

from oracles.api import NEEDS_CALLS, RecordedRun, Verdict, oracle

TOLERANCE = 1e-2


def _max_abs_diff(compiled, eager):
    if not (isinstance(compiled, torch.Tensor) and isinstance(eager, torch.Tensor)):
        return None
    if compiled.shape != eager.shape:
        return float("inf")
    return (compiled.detach().double() - eager.detach().double()).abs().max().item() if eager.numel() else 0.0


@oracle("output0-differs", needs={NEEDS_CALLS})
def output0_differs(run: RecordedRun) -> Verdict:
    """Output 0 of a compiled call differs from eager's by more than 1e-2 (max abs diff)."""

    for call in run.calls:
        if not call.eager.outputs or not call.compiled.outputs:
            continue  # a side raised or returned nothing: a crash, which this oracle does not look for
        diff = _max_abs_diff(call.compiled.outputs[0], call.eager.outputs[0])
        if diff is not None and diff > TOLERANCE:
            # The signature names no call, shape or number: those change while the script shrinks.
            return Verdict(True, "output 0 differs from eager", f"call {call.index} ({call.target}): max abs diff {diff:.3g}")
    return Verdict(False, detail=f"no compiled call's output 0 differs from eager by more than {TOLERANCE}")
