"""The ``numerical`` oracle: compiled outputs are further from a float64 reference than eager outputs are.

The rule follows ``torch._dynamo.utils.same(..., fp64_ref=...)``: the compiled result is wrong when it is not
close to eager and its RMSE against the float64 reference exceeds ``MULTIPLIER`` times eager's RMSE against the
same reference plus a small absolute floor. ``compare_tensors`` is shared with the ``gradient`` oracle.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from oracles.bug import Bug
from oracles.api import NEEDS_CALLS, NEEDS_REFERENCE, RecordedRun, Verdict, oracle

# Closeness that always passes, before the reference is consulted: allclose(eager, compiled, rtol=atol=TOL).
TOL = {"low": 1e-2, "default": 1e-4}
# compiled fails when rmse(ref, compiled) > MULTIPLIER * rmse(ref, eager) + FLOOR (as in dynamo's `same`,
# whose floor is tol / 10).
MULTIPLIER = {"low": 3.0, "default": 2.0}
FLOOR = {"low": 1e-3, "default": 1e-5}
# Without a usable reference: allclose(eager, compiled, rtol=atol=NO_REF_TOL) must hold.
NO_REF_TOL = {"low": 2e-2, "default": 1e-3}

# When several findings exist, the most severe decides the signature.
KIND_ORDER = ("structure", "count", "nan", "inf", "shape", "dtype", "missing", "value")


@dataclass(frozen=True)
class Mismatch:
    """One compared pair that differs: its kind (see ``KIND_ORDER``), dtype name and a human detail."""

    kind: str
    dtype: str
    detail: str

    def in_words(self) -> str:
        """``wrong values, float32``: how it differs, for people."""

        return f"{_HOW.get(self.kind, self.kind)}, {self.dtype}"


_HOW = {"value": "wrong values", "nan": "NaN where eager has none", "inf": "inf where eager has none",
        "shape": "wrong shape", "dtype": "wrong dtype", "count": "another number of outputs",
        "structure": "other containers"}


def compare_tensors(eager: Any, compiled: Any, reference: Any = None) -> Mismatch | None:
    """Judge ``compiled`` against ``eager`` (and the float64 ``reference`` when given); ``None`` if they agree.

    Non-tensors are not compared. Integer and bool tensors must be equal. Floating tensors fail on a NaN or
    inf pattern that differs (``nan`` / ``inf``), else by the fp64-reference rule above (``value``).
    """

    import torch

    if not isinstance(eager, torch.Tensor) or not isinstance(compiled, torch.Tensor):
        return None
    dtype = dtype_name(eager.dtype)
    if eager.shape != compiled.shape:
        return Mismatch("shape", dtype, f"eager shape {list(eager.shape)}, compiled {list(compiled.shape)}")
    if eager.dtype != compiled.dtype:
        return Mismatch("dtype", dtype, f"eager {dtype}, compiled {dtype_name(compiled.dtype)}")
    e, c = _as_real(eager), _as_real(compiled)
    if not (e.is_floating_point()):
        if torch.equal(e.cpu(), c.cpu()):
            return None
        count = int((e.cpu() != c.cpu()).sum())
        return Mismatch("value", dtype, f"{count} of {e.numel()} elements differ")
    e, c = e.detach().cpu().double(), c.detach().cpu().double()
    if not torch.equal(torch.isnan(e), torch.isnan(c)):
        return Mismatch("nan", dtype, f"NaN in eager: {int(torch.isnan(e).sum())}, in compiled: {int(torch.isnan(c).sum())}")
    if not torch.equal(torch.isinf(e), torch.isinf(c)) or not torch.equal(e[torch.isinf(e)], c[torch.isinf(c)]):
        return Mismatch("inf", dtype, f"inf in eager: {int(torch.isinf(e).sum())}, in compiled: {int(torch.isinf(c).sum())}")
    finite = torch.isfinite(e)
    e, c = e[finite], c[finite]
    group = "low" if eager.dtype in (torch.float16, torch.bfloat16) or eager.dtype.itemsize == 1 else "default"
    if torch.allclose(e, c, rtol=TOL[group], atol=TOL[group]):
        return None
    max_diff = float((e - c).abs().max())
    r = _usable_reference(reference, eager.shape)
    if r is None:
        if torch.allclose(e, c, rtol=NO_REF_TOL[group], atol=NO_REF_TOL[group]):
            return None
        return Mismatch("value", dtype, f"max abs diff {max_diff:.3g} (no float64 reference)")
    r = r[finite]
    if not bool(torch.isfinite(r).all()):
        return None  # the reference overflows where both sides are finite: nothing to judge by
    ref_error, res_error = _rmse(r, e), _rmse(r, c)
    bound = MULTIPLIER[group] * ref_error + FLOOR[group]
    if res_error <= bound:
        return None
    ratio = res_error / ref_error if ref_error > 0 else float("inf")
    return Mismatch(
        "value",
        dtype,
        f"max abs diff {max_diff:.3g}; rmse vs float64: compiled {res_error:.3g}, eager {ref_error:.3g} "
        f"(ratio {ratio:.3g}, bound {bound:.3g})",
    )


def calls_of_their_targets(calls: list[Any]) -> dict[int, int]:
    """Which call of its compiled target each recorded call is (by ``id``; 0: the target's first), as the
    capture run counts them (``minimizer.graph.call_record``), so that the lift can record that call."""

    made: Counter[str] = Counter()
    ordinal = {}
    for call in calls:
        ordinal[id(call)] = made[call.target]
        made[call.target] += 1
    return ordinal


def dtype_name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")


def worst(findings: list[tuple]) -> tuple:
    """The most severe of ``(Mismatch, ...)`` findings (by ``KIND_ORDER``), the earliest among equals."""

    return min(findings, key=lambda found: KIND_ORDER.index(found[0].kind))


def _as_real(t: Any) -> Any:
    import torch

    return torch.view_as_real(t.resolve_conj()) if t.is_complex() else t


def _usable_reference(reference: Any, shape: Any) -> Any:
    import torch

    if not isinstance(reference, torch.Tensor) or reference.shape != shape:
        return None
    r = _as_real(reference)
    return r.detach().cpu().double() if r.is_floating_point() else None


def _rmse(ref: Any, res: Any) -> float:
    import torch

    return float(torch.sqrt(torch.mean(torch.square(ref - res)))) if ref.numel() else 0.0


@oracle("numerical", needs={NEEDS_CALLS, NEEDS_REFERENCE}, reads_only_calls=True)
def numerical(run: RecordedRun) -> Verdict:
    """Compiled outputs differ from eager beyond what the float64 reference allows (or NaN/inf differ).

    Rule (per floating output, like dynamo's ``same`` with ``fp64_ref``): passes when
    ``allclose(eager, compiled, rtol=atol=1e-4)`` (1e-2 for float16/bfloat16/8-bit floats); otherwise fails
    when ``rmse(ref, compiled) > 2.0 * rmse(ref, eager) + 1e-5`` (3.0 and 1e-3 for low precision). A
    differing NaN or inf pattern always fails; integer/bool outputs must be equal. Without a float64
    reference (it raised or gave another shape), ``allclose`` with rtol=atol=1e-3 (2e-2 low precision) decides.

    Signature: ``numerical: <dtype> <kind>``, kind one of ``nan``, ``inf``, ``value``, ``shape``, ``dtype``
    (or ``numerical: outputs count`` when the sides return different numbers of outputs, ``numerical: outputs
    structure`` when they return them in different containers: a lowering that returns ``[x]`` for a tensor is
    a different bug from one that computes a wrong tensor, whatever the values). Call index, target
    and output index are left out on purpose: reduction removes calls and outputs without changing the bug;
    they are in the detail, with the max abs diff and the error ratio. The most severe finding decides.
    """

    findings: list[tuple[Mismatch, str, int]] = []
    ordinal = calls_of_their_targets(run.calls)
    for call in run.calls:
        eager, compiled = call.eager.outputs, call.compiled.outputs
        if eager is None or compiled is None:
            continue  # a side raised: the crash oracle's business
        where = f"call {call.index} of {call.target}"
        if call.eager.structure != call.compiled.structure and None not in (call.eager.structure, call.compiled.structure):
            detail = f"eager returns {call.eager.structure}, compiled {call.compiled.structure}"
            findings.append((Mismatch("structure", "outputs", detail), where, ordinal[id(call)]))
            continue
        if len(eager) != len(compiled):
            findings.append((Mismatch("count", "outputs", f"eager {len(eager)}, compiled {len(compiled)}"), where, ordinal[id(call)]))
            continue
        reference = call.reference.outputs if call.reference is not None else None
        if reference is not None and len(reference) != len(eager):
            reference = None
        for i, (e, c) in enumerate(zip(eager, compiled)):
            found = compare_tensors(e, c, reference[i] if reference is not None else None)
            if found is not None:
                findings.append((found, f"{where}, output {i}", ordinal[id(call)]))
    if not findings:
        return Verdict(False, detail=f"outputs agree in {len(run.calls)} compiled calls")
    found, where, index = worst(findings)
    signature = f"numerical: outputs {found.kind}" if found.dtype == "outputs" else f"numerical: {found.dtype} {found.kind}"
    words = f"compiled outputs differ from eager ({found.in_words()}) at {where}: {found.detail}"
    return Verdict(True, detail=f"{where}: {found.detail}", bug=Bug(signature, words=words, call=index))
