"""The ``requires-grad`` oracle: a compiled call's outputs lose (or gain) ``requires_grad`` or their grad_fn."""

from __future__ import annotations

from typing import Any

from oracles.bug import Bug
from oracles.api import NEEDS_CALLS, RecordedRun, SideResult, Verdict, oracle


@oracle("requires-grad", needs={NEEDS_CALLS}, reads_only_calls=True)
def requires_grad(run: RecordedRun) -> Verdict:
    """An output's requires_grad (or grad_fn presence) differs between eager and compiled.

    Signature: ``requires-grad: eager=<bool> compiled=<bool>`` when ``requires_grad`` differs, else
    ``requires-grad: grad_fn eager=<bool> compiled=<bool>`` when only the presence of a ``grad_fn`` differs.
    The first differing tensor output (in call order, then pytree order) decides; calls where a side raised or
    the sides return different numbers of outputs are skipped.
    """

    for call in run.calls:
        eager, compiled = call.eager, call.compiled
        if eager.outputs is None or compiled.outputs is None or len(eager.outputs) != len(compiled.outputs):
            continue
        for i in range(len(eager.outputs)):
            e_rg, c_rg = _flag(eager, i, "requires_grad"), _flag(compiled, i, "requires_grad")
            if e_rg is not None and c_rg is not None and e_rg != c_rg:
                bug = Bug(f"requires-grad: eager={e_rg} compiled={c_rg}", eager_requires_grad=bool(e_rg),
                          words=f"requires_grad of the compiled call's output {i} is {c_rg}, eager's {e_rg}")
                return Verdict(True, detail=_where(call, i), bug=bug)
            e_fn, c_fn = _flag(eager, i, "has_grad_fn"), _flag(compiled, i, "has_grad_fn")
            if e_fn is not None and c_fn is not None and e_fn != c_fn:
                return Verdict(True, f"requires-grad: grad_fn eager={e_fn} compiled={c_fn}", _where(call, i))
    return Verdict(False, detail=f"requires_grad agrees in {len(run.calls)} compiled calls")


def _flag(side: SideResult, i: int, name: str) -> bool | None:
    """The recorded flag of output ``i``; for hand-made records without flags, read it off the tensor."""

    flags: list[Any] | None = getattr(side, name)
    if flags is not None and i < len(flags):
        return flags[i]
    output = side.outputs[i] if side.outputs is not None else None
    if not hasattr(output, "requires_grad"):
        return None
    return bool(output.requires_grad) if name == "requires_grad" else output.grad_fn is not None


def _where(call: Any, i: int) -> str:
    return f"call {call.index} of {call.target}, output {i}"
