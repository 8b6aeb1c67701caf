"""Which values a tensor was computed from: the draws its computation started from (what a factory such as
``randn``, ``ones`` or a layer's initialization produced), each known by a digest of its bytes.

A script that checks its kernel against torch draws the inputs of both paths the same way (``manual_seed(0)``
before each, or one ``x`` for both). Once a reduction deletes that reseeding, the kernel's output is compared with
a reference computed from other random numbers, and the check fails whatever the kernel does; the operations
that computed each side are the same as before, since a draw is no operation. ``DrawsFollower`` keeps, for each
tensor the script computes, the digests of the draws it came from; a launch's inputs' draws are kept with what it
wrote (``oracles.compared.KernelWrites``), and a reference that shares none of them is computed from other data
(``from_other_data``). Digests never reach a signature (they change with the seed): only whether the two sides
share one does.
"""

from __future__ import annotations

import hashlib
import sys
from typing import Any, Iterator

from oracles.comparison import Operand

# A draw larger than this is not digested (copying it to the host for a digest costs more than it tells).
_MOST_ELEMENTS = 1 << 16
# Factories whose values are not drawn: memory as it was left.
_UNDRAWN = frozenset({"empty", "empty_like", "empty_strided"})
FROM_OTHER_DATA = " from other data"


class DrawsFollower:
    """The digests of the draws each tensor of the script was computed from, by weak reference to the tensor."""

    def __init__(self) -> None:
        import torch.utils.weak

        self._of: Any = torch.utils.weak.WeakIdKeyDictionary()

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
    marked ``from other data``; where either side's draws are not known, as they were."""

    launched = frozenset().union(*(writes.draws_of(v) for v in values if writes.writer_of(v) is not None))
    if not launched:
        return operands
    marked = []
    for operand, value in zip(operands, values):
        drawn = follower.of([value]) if writes.writer_of(value) is None else frozenset()
        other = drawn and not drawn & launched
        marked.append(Operand(operand.origin + FROM_OTHER_DATA, operand.described) if other else operand)
    return tuple(marked)


def _digest(tensor: Any) -> str | None:
    try:
        if tensor.numel() > _MOST_ELEMENTS or tensor.is_meta:
            return None
        data = tensor.detach().cpu().contiguous().reshape(-1).view(sys.modules["torch"].uint8)
        return hashlib.blake2b(data.numpy().tobytes(), digest_size=8).hexdigest() + str(tuple(tensor.shape))
    except Exception:  # a fake or sparse tensor, an unusual dtype: its draw is simply not known
        return None


def shallow(args: tuple, kwargs: dict) -> Iterator[Any]:
    """The arguments, and the items of those that are lists or tuples."""

    for value in (*args, *kwargs.values()):
        if isinstance(value, (list, tuple)):
            yield from value
        else:
            yield value


def tensors_in(value: Any) -> list[Any]:
    """The tensors ``value`` is or holds (a list, tuple or dict of them, or a library's output object)."""

    torch = sys.modules["torch"]
    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (list, tuple)):
        return [v for v in value if isinstance(v, torch.Tensor)]
    if isinstance(value, dict):
        return [v for v in value.values() if isinstance(v, torch.Tensor)]
    found = []
    for field in ("loss", "logits", "last_hidden_state", "sample"):  # library output objects
        inner = getattr(value, field, None)
        if isinstance(inner, torch.Tensor):
            found.append(inner)
    return found
