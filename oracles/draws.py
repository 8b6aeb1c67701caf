"""Which values a tensor was computed from: the draws its computation started from (what a factory such as
``randn``, ``ones`` or a layer's initialization produced), each known by a digest of its bytes.

A script that checks its kernel against torch draws the inputs of both paths the same way (``manual_seed(0)``
before each, or one ``x`` for both). Once a reduction deletes that reseeding, the kernel's output is compared with
a reference computed from other random numbers, and the check fails whatever the kernel does; the operations
that computed each side are the same as before, since a draw is no operation. ``DrawsFollower`` keeps, for each
tensor the script computes, the digests of the draws it came from; a launch's inputs' draws (``draws_of`` in
``oracles.evidence``) are kept with what it wrote (``oracles.compared.KernelWrites``), and a reference that shares
none of them is computed from other data (``from_other_data``). Digests never reach a signature (they change with
the seed): only whether the two sides share one does.
"""

from __future__ import annotations

from typing import Any

from oracles.arguments import shallow
from oracles.compared import digest_of
from oracles.comparison import Operand

# A draw larger than this is not digested (copying it to the host for a digest costs more than it tells).
_MOST_ELEMENTS = 1 << 16
# Factories whose values are not drawn: memory as it was left.
_UNDRAWN = frozenset({"empty", "empty_like", "empty_strided"})
FROM_OTHER_DATA = " from other data"
THROUGH_OTHER_DATA = " through other data"


class DrawsFollower:
    """The digests of the draws each tensor of the script was computed from, by weak reference to the tensor."""

    def __init__(self) -> None:
        import torch.utils.weak

        self._of: Any = torch.utils.weak.WeakIdKeyDictionary()

    @classmethod
    def watching(cls, writes: Any) -> DrawsFollower:
        """A follower that ``writes`` (``oracles.kernel_writes.KernelWrites``) asks what a launch wrote over."""

        follower = cls()
        if writes is not None:
            writes.follower = follower
        return follower

    def follow(self, name: str, factory: bool, args: tuple, kwargs: dict, results: list[Any]) -> None:
        """``results`` computed by ``name``: a factory's are a draw of their own; an operation's come from the
        draws of its arguments (an in-place one adds them to what its target came from)."""

        if factory:
            drawn = frozenset() if name in _UNDRAWN else frozenset(filter(None, map(_digest, results)))
            for tensor in results:
                self._of[tensor] = drawn
            return
        found = self.of(list(shallow(args, kwargs)))
        if found:
            for tensor in results:
                self._of[tensor] = self._of.get(tensor, frozenset()) | found

    def of(self, values: list[Any]) -> frozenset:
        """The draws ``values`` were computed from (empty: none known)."""

        return frozenset().union(*(self._of.get(v, frozenset()) for v in values if hasattr(v, "untyped_storage")))


def from_other_data(operands: tuple[Operand, ...], values: tuple, writes: Any, follower: DrawsFollower) -> tuple:
    """``operands`` with each reference computed from none of the draws a compared kernel's launch was given
    marked ``from other data``, and each value computed from a kernel's output through draws that neither the
    launch nor the reference read (a fresh layer on the kernel's side only) marked ``through other data``;
    where either side's draws are not known, as they were."""

    written = [writes.writer_of(v) is not None for v in values]
    # A kernel's output itself, or a value computed from it (`out.exp().sum()`): what its launches read.
    computed = [o.kernels if not w else [] for o, w in zip(operands, written)]
    launched = frozenset().union(
        *(writes.draws_of(v) for v, w in zip(values, written) if w),
        *(writes.draws_read_by(kernel) for kernels in computed for kernel in kernels),
    )
    if not launched:
        return operands
    by_kernel = [w or bool(k) for w, k in zip(written, computed)]
    references = frozenset().union(*(follower.of([v]) for v, k in zip(values, by_kernel) if not k))
    marked = []
    for operand, value, kernel_side, computed_from_output in zip(operands, values, by_kernel, computed):
        drawn = follower.of([value])
        if not kernel_side:
            other = drawn and not drawn & launched
            marked.append(Operand(operand.origin + FROM_OTHER_DATA, operand.described) if other else operand)
            continue
        # The kernel's output went on through values the reference never saw (a layer of its own after the
        # kernel, where the reference's path has another or none): what is compared is no longer the same function
        # on both sides, whatever the operations are called.
        overwritten = frozenset().union(*(writes.draws_overwritten_by(k) for k in computed_from_output))
        after = drawn - launched - overwritten if computed_from_output else frozenset()
        through = after and references and not after <= references
        marked.append(Operand(operand.origin + THROUGH_OTHER_DATA, operand.described) if through else operand)
    return tuple(marked)


def measured_through_other_data(
    suspects: list[Any], references: list[Any], origin: frozenset, writes: Any, follower: DrawsFollower
) -> bool:
    """Whether values computed from kernels' outputs (``suspects``, of ``origin``), met with ``references`` in one
    operation (``ours - ref``), went through draws that neither the kernels' launches nor the references were
    computed from: a layer of their own on the kernel's side only."""

    if writes is None or not suspects or not references:
        return False
    kernels = {o.split()[1].partition("(")[0] for o in origin if o.startswith("kernel ") and len(o.split()) > 1}
    launched = frozenset().union(*(writes.draws_read_by(k) | writes.draws_overwritten_by(k) for k in kernels))
    after, seen = follower.of(suspects) - launched, follower.of(references)
    return bool(after and seen and not after <= seen)


def _digest(tensor: Any) -> str | None:
    """``tensor``'s dtype, shape and bytes digested (``oracles.compared.digest_of``), where it is small enough."""

    try:
        return None if tensor.numel() > _MOST_ELEMENTS or tensor.is_meta else digest_of([tensor])
    except Exception:  # a fake or sparse tensor, an unusual layout: its draw is simply not known
        return None
