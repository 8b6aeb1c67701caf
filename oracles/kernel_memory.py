"""The memory a Triton kernel touched, exactly, when it runs under Triton's interpreter.

Two things a comparison of a kernel's output cannot tell by itself:

- which elements a launch wrote: comparing bytes before and after misses every store of the value the memory
  already held (zeros into fresh ``torch.empty`` memory), so such elements look unwritten;
- whether the kernel reads or writes outside the tensors it was given: a reduction that shrinks one tensor's
  size apart from another's (the norm's weight to 1 element, its input to 2) makes a correct kernel read past
  the weight, and the comparison fails as it did for the kernel's real bug.

Under the interpreter every load and store goes through a few methods of its builder, which get the addresses;
recording them tells both. On a GPU, or where the builder has other methods, nothing is recorded.

What a load past every tensor reads is whatever the allocator left there: garbage in a candidate forked from a
process that has run for a while, most often zeros in the fresh process of ``python repro.py``. A step whose
failure hangs on that garbage fails under minimizer and passes under plain python (one row of a norm whose
mask reads one element too many: its only stray element decides). So the harness fences interpreted launches:
such loads read zeros, as in a fresh process, and only a failure that does not hang on them is seen.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

# Builder method -> (kind, position of its pointer argument, position of its mask or None: every lane).
_ACCESSING = {
    "create_masked_store": ("store", 0, 2),
    "create_atomic_store": ("store", 0, 2),
    "create_atomic_rmw": ("store", 1, 3),
    "create_atomic_cas": ("store", 0, None),
    "create_masked_load": ("load", 0, 1),
}


@dataclass
class Accesses:
    """The addresses one launch loaded and stored: (flat uint64 addresses, bytes each) per builder call."""

    loads: list[tuple[Any, int]] = field(default_factory=list)
    stores: list[tuple[Any, int]] = field(default_factory=list)


class InterpretedAccesses:
    """Patches the interpreter's builder (once installed) to note the addresses of each load and store while a
    ``recording()`` block is open."""

    def __init__(self) -> None:
        self._open: Accesses | None = None
        self._fence: tuple[Any, Any] | None = None  # (starts, ends) of the storages loads may read
        self._real: dict[str, Any] = {}
        self._builder: Any = None

    def install(self) -> None:
        try:
            from triton.runtime.interpreter import InterpreterBuilder
        except ImportError:
            return
        for name, (kind, pointer, mask) in _ACCESSING.items():
            real = getattr(InterpreterBuilder, name, None)
            if real is not None:
                self._real[name] = real
                setattr(InterpreterBuilder, name, self._noting(real, kind, pointer, mask))
        self._builder = InterpreterBuilder

    def uninstall(self) -> None:
        for name, real in self._real.items():
            setattr(self._builder, name, real)
        self._real.clear()

    def _noting(self, real: Any, kind: str, pointer: int, mask: int | None) -> Any:
        accesses = self

        def access(builder: Any, *args: Any, **kwargs: Any) -> Any:
            if accesses._open is not None:
                accesses._note(kind, args, pointer, mask)
            result = real(builder, *args, **kwargs)
            if kind == "load" and accesses._fence is not None:
                result = accesses._zero_strays(result, args, pointer, mask)
            return result

        return access

    def _note(self, kind: str, args: tuple, pointer: int, mask: int | None) -> None:
        lanes = _lanes(args, pointer, mask)
        if lanes is None:
            return
        addresses, size, active = lanes
        noted = (addresses[active].astype("uint64"), size)
        (self._open.stores if kind == "store" else self._open.loads).append(noted)  # type: ignore[union-attr]

    def _zero_strays(self, result: Any, args: tuple, pointer: int, mask: int | None) -> Any:
        """``result`` with zeros in the lanes that loaded from outside the fenced storages."""

        import numpy as np

        lanes = _lanes(args, pointer, mask)
        if lanes is None:
            return result
        addresses, size, active = lanes
        stray = active & ~_inside(addresses, size, *self._fence)  # type: ignore[misc]
        if stray.any():
            try:
                result.data = np.where(stray, np.zeros_like(result.data), result.data)
            except Exception:  # noqa: BLE001 - a builder of another Triton release: the load stays as it was
                pass
        return result

    @contextlib.contextmanager
    def recording(self, interpreted: bool, fenced: Iterable[Any] = (), noting: bool = True) -> Iterator[Accesses | None]:
        """Within the block, the accesses of an interpreted launch are noted in what it yields (``None`` for a
        launch that does not run under the interpreter, without the builder patched, or not ``noting``), and
        its loads from outside the storage of every one of ``fenced`` (the launch's tensors) read zeros, where
        they all lie in host memory (otherwise the interpreter works on copies)."""

        if not interpreted or not self._real:
            yield None
            return
        self._fence = _bounds(list(fenced))
        self._open = accesses = Accesses() if noting else None
        try:
            yield accesses
        finally:
            self._open = self._fence = None


def _lanes(args: tuple, pointer: int, mask: int | None) -> tuple[Any, int, Any] | None:
    """A builder call's addresses (int64, in the shape of its block), bytes per element, and which lanes access
    memory (its mask, broadcast); ``None`` for a builder of another Triton release, whose arguments differ."""

    import numpy as np

    try:
        addresses = np.asarray(args[pointer].data).astype(np.int64)
        size = max(1, args[pointer].get_element_ty().primitive_bitwidth // 8)
        active = np.ones(addresses.shape, dtype=bool)
        if mask is not None and mask < len(args) and args[mask] is not None:
            active = np.broadcast_to(np.asarray(args[mask].data, dtype=bool), addresses.shape)
    except Exception:  # noqa: BLE001 - nothing is known
        return None
    return addresses, size, active


def _inside(addresses: Any, size: int, starts: Any, ends: Any) -> Any:
    """Which of ``addresses`` (``size`` bytes each) lie wholly within one of the storages ``starts``..``ends``."""

    return ((addresses[..., None] >= starts) & (addresses[..., None] + size <= ends)).any(axis=-1)


def _bounds(tensors: list[Any]) -> tuple[Any, Any] | None:
    """The (starts, ends) byte addresses of the storages of ``tensors``, if all of them are in host memory."""

    import numpy as np

    if not tensors or any(t.device.type != "cpu" for t in tensors):
        return None
    starts = np.array([t.untyped_storage().data_ptr() for t in tensors], dtype=np.int64)
    return starts, starts + np.array([t.untyped_storage().nbytes() for t in tensors], dtype=np.int64)


def stored_elements(tensor: Any, accesses: Accesses | None) -> Any:
    """The flat mask of ``tensor``'s elements some noted store wrote a byte of, or ``None`` when nothing was
    noted (the launch was not interpreted)."""

    import numpy as np
    import torch

    if accesses is None:
        return None
    storage = tensor.untyped_storage()
    base, nbytes, itemsize = storage.data_ptr(), storage.nbytes(), tensor.element_size()
    touched = np.zeros(nbytes, dtype=bool)
    for addresses, size in accesses.stores:
        offsets = addresses.astype(np.int64) - base
        offsets = offsets[(offsets > -size) & (offsets < nbytes)]
        for byte in range(size):
            inside = offsets + byte
            touched[inside[(inside >= 0) & (inside < nbytes)]] = True
    elements = nbytes // itemsize
    per_element = torch.from_numpy(touched[: elements * itemsize].reshape(elements, itemsize).any(axis=1))
    where = torch.arange(elements).as_strided(tuple(tensor.shape), tuple(tensor.stride()), tensor.storage_offset())
    return per_element[where.reshape(-1)]


def loaded_from(tensor: Any, accesses: Accesses | None) -> bool:
    """Whether some noted load read a byte of ``tensor``'s storage (``True`` when nothing was noted: the launch
    was not interpreted, and it may have)."""

    import numpy as np

    if accesses is None:
        return True
    storage = tensor.untyped_storage()
    base, nbytes = storage.data_ptr(), storage.nbytes()
    for addresses, size in accesses.loads:
        offsets = addresses.astype(np.int64) - base
        if ((offsets > -size) & (offsets < nbytes)).any():
            return True
    return False


def out_of_bounds(accesses: Accesses | None, tensors: dict[str, Any]) -> dict[tuple[str, str], tuple[int, int]]:
    """``{("reads", "x_ptr"): (1, 0)}``: for the accesses outside the storage of every tensor the launch was given
    (``tensors``: parameter name -> tensor), the parameter whose storage is nearest, with how many of its
    elements past its end and before its start the farthest one reached. Empty when nothing was noted, or when
    a tensor is not in host memory (the interpreter then works on copies).

    How far matters: a kernel whose bug reads one element past each row reads one past its weight; a candidate
    whose weight was shrunk to one element while the rows kept three reads two past it, also with the bug fixed."""

    import numpy as np

    bounds = _bounds(list(tensors.values()))
    if accesses is None or bounds is None:
        return {}
    names = list(tensors)
    starts, ends = bounds
    itemsizes = np.array([tensors[n].element_size() for n in names], dtype=np.int64)
    found: dict[tuple[str, str], tuple[int, int]] = {}
    for verb, noted in (("reads", accesses.loads), ("writes", accesses.stores)):
        for addresses, size in noted:
            first = addresses.astype(np.int64)
            outside = first[~_inside(first, size, starts, ends)]
            if not outside.size:
                continue
            # Distance from each stray address to each storage (0 inside it); the nearest one is named.
            distance = np.maximum(starts - outside[:, None], outside[:, None] + size - ends).clip(min=0)
            nearest = distance.argmin(axis=1)
            for i in np.unique(nearest):
                mine = outside[nearest == i]
                past = int(((mine.max() + size - ends[i] + itemsizes[i] - 1) // itemsizes[i]).clip(min=0))
                before = int(((starts[i] - mine.min() + itemsizes[i] - 1) // itemsizes[i]).clip(min=0))
                note_reach(found, (verb, names[i]), (past, before))
    return found


def note_reach(found: dict[Any, tuple[int, int]], key: Any, reach: tuple[int, int]) -> None:
    """Keep in ``found[key]`` the farthest reach (past the end, before the start) seen so far."""

    known = found.get(key, (0, 0))
    found[key] = (max(known[0], reach[0]), max(known[1], reach[1]))
