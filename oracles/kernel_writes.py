"""Where the script's own Triton kernels wrote: for each storage a launch was given, the kernel that last wrote
it, which of its elements no launch changed, and what that launch was given. What a failing comparison compared
(``oracles.compared``, ``oracles.evidence``) reads a kernel's output from here.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

# How an origin tells a kernel's output of which the kernel's launches left elements unwritten.
PART_WRITTEN = " writing part of its output"


class _Written(NamedTuple):
    """What ``KernelWrites`` keeps of a storage a launch was given."""

    storage: Any  # weak reference to the storage
    kernel: str | None  # the kernel that last wrote it, or None (only read)
    tensor: Any  # weak reference to the tensor written or given
    unchanged: Any  # flat mask of its elements no launch changed, or None
    launch: str  # what that launch was given, as an origin tells it
    draws: frozenset  # the draws that launch's tensors came from
    stores_known: bool  # whether ``unchanged`` was told by the stores themselves (Triton's interpreter)
    event: frozenset = frozenset()  # the launch's event, as an origin item (``oracles.events``)


class KernelWrites:
    """The storages of the tensors the script's own kernels were given, by weak reference, with the last kernel
    that wrote each (if one did) and, where known, which elements of the tensor written no launch changed.

    Storages, not tensors: a kernel often writes through a view (`out = x.reshape(-1, n)` inside a helper)
    that dies when the helper returns, while the tensor the script compares shares its storage."""

    _MOST = 512

    def __init__(self) -> None:
        # id(storage) -> what was written there, in the order of the last write (storages only read keep the place
        # they were first given at).
        self._storages: dict[int, _Written] = {}
        self._parameters: dict[str, set[str]] = {}  # kernel -> the parameters through which it wrote
        self.writes_noted = 0  # how many writes were noted so far; with `_last_noted`, which kernels wrote since
        self._last_noted: dict[str, int] = {}
        self._noted_events: list[tuple[int, frozenset]] = []  # (writes_noted, the launch's event) of each write noted
        self._drawn: dict[str, frozenset] = {}  # kernel -> the draws its launches read
        self._overwritten: dict[str, frozenset] = {}  # kernel -> the draws of what its launches wrote over
        self.follower: Any = None  # the draws follower of the evidence recorder watching (``oracles.draws``)

    def note_parameters(self, kernel: str, written: list[str]) -> None:
        """``kernel`` wrote through its parameters named ``written`` in a launch."""

        self._parameters.setdefault(kernel, set()).update(written)

    def parameters_written(self, kernel: str) -> set[str]:
        return self._parameters.get(kernel, set())

    def note_passed(self, tensor: Any) -> None:
        """``tensor`` was an argument of a launch (read, written, or both)."""

        if self._entry(tensor) is None:
            self._keep(tensor, None, None)

    def note(
        self, tensor: Any, kernel: str, unchanged: Any = None, launch: str = "", draws: frozenset = frozenset(),
        stores_known: bool = False, event: frozenset = frozenset(),
    ) -> None:
        """``tensor`` was written by ``kernel`` in the launch ``event``; ``unchanged``: a flat boolean mask of the elements this launch
        left as they were (``None``: not known); ``launch``: what the launch was given, as an origin tells it
        (``(max_bucket=6) of linear+mul``: the numbers, ``oracles.settings.launch_settings``, and the torch
        operations that computed its tensors); ``draws``: the draws its tensors came from (``oracles.draws``);
        ``stores_known``: the mask was told by the launch's stores, not by bytes that changed."""

        known = self._entry(tensor)
        if known is not None and known.kernel is not None and known.tensor() is tensor:
            # Unchanged by every launch; one launch that told nothing makes it unknown.
            unchanged = None if known.unchanged is None or unchanged is None else known.unchanged & unchanged
            stores_known = stores_known and known.stores_known
        self._keep(tensor, kernel, unchanged, launch, draws, stores_known, event)
        self._drawn[kernel] = self._drawn.get(kernel, frozenset()) | draws
        # What was there before (`out = x * 1` as the buffer): no torch operation wrote the stores, so the draws
        # followed still say it.
        before = self.follower.of([tensor]) if self.follower is not None else frozenset()
        self._overwritten[kernel] = self._overwritten.get(kernel, frozenset()) | before
        self.writes_noted += 1
        self._last_noted[kernel] = self.writes_noted
        self._noted_events.append((self.writes_noted, event))
        del self._noted_events[: -self._MOST]

    def kernels_since(self, mark: int) -> set[str]:
        """The kernels that wrote a tensor since ``writes_noted`` was ``mark``."""

        return {kernel for kernel, noted in self._last_noted.items() if noted > mark}

    def events_since(self, mark: int) -> frozenset:
        """The events of the launches that wrote a tensor since ``writes_noted`` was ``mark``."""

        return frozenset().union(*(event for noted, event in self._noted_events if noted > mark))

    def _entry(self, value: Any) -> _Written | None:
        storage = _storage_object(value)
        known = self._storages.get(id(storage)) if storage is not None else None
        return known if known is not None and known.storage() is storage else None

    def _keep(
        self, tensor: Any, kernel: str | None, unchanged: Any, launch: str = "", draws: frozenset = frozenset(),
        stores_known: bool = False, event: frozenset = frozenset(),
    ) -> None:
        storage = _storage_object(tensor)
        if storage is None:
            return
        try:
            entry = _Written(weakref.ref(storage), kernel, weakref.ref(tensor), unchanged, launch, draws, stores_known, event)
        except TypeError:
            return
        self._storages.pop(id(storage), None)
        self._storages[id(storage)] = entry
        if len(self._storages) > self._MOST:
            alive = [(key, entry) for key, entry in self._storages.items() if entry.storage() is not None]
            self._storages = dict(alive[-self._MOST :])

    def clear(self) -> None:
        self._storages.clear()
        self._parameters.clear()
        self._last_noted.clear()
        self._drawn.clear()

    def __bool__(self) -> bool:
        return any(entry.kernel is not None for entry in self._storages.values())

    def writer_of(self, value: Any) -> str | None:
        """The last kernel that wrote into ``value``'s storage, while that storage lives."""

        known = self._entry(value)
        return known.kernel if known is not None else None

    def event_of(self, value: Any) -> frozenset:
        """The event of the launch that last wrote into ``value``'s storage (empty where none is known)."""

        known = self._entry(value)
        return known.event if known is not None else frozenset()

    def launch_of(self, value: Any) -> str:
        """What the launch that last wrote into ``value``'s storage was given (``(max_bucket=6) of linear``), and
        whether its kernels left part of ``value`` unwritten (``PART_WRITTEN``, where their stores tell it)."""

        known = self._entry(value)
        if known is None or not _part_unwritten(known, value):
            return known.launch if known is not None else ""
        # A check of an output the kernel wrote only in part fails on what the buffer held before: a kernel
        # shrunk to one column of two compares `out = x * 1`'s second element, not what the kernel computed.
        settings, sep, operations = known.launch.partition(" of ")
        return f"{settings}{PART_WRITTEN}{sep}{operations}"

    def draws_of(self, value: Any) -> frozenset:
        """The draws the tensors of the launch that last wrote into ``value``'s storage came from."""

        known = self._entry(value)
        return known.draws if known is not None else frozenset()

    def draws_overwritten_by(self, kernel: str) -> frozenset:
        """The draws of what ``kernel``'s launches wrote over: a value computed from its output still carries them
        (the draws follow torch's operations, which the launch's stores do not change), though it read none."""

        return self._overwritten.get(kernel, frozenset())

    def draws_read_by(self, kernel: str) -> frozenset:
        """The draws the tensors ``kernel``'s launches read came from (what a value computed from its output, a
        sum of it, was computed from on the kernel's side)."""

        return self._drawn.get(kernel, frozenset())

    def was_passed(self, value: Any) -> bool:
        """Whether ``value``'s storage is that of a tensor a launch was given, while that storage lives."""

        return self._entry(value) is not None

    def unchanged_elements(self, value: Any) -> Any:
        """The flat mask of ``value``'s elements no kernel launch changed (``value`` itself, not a view of it),
        or ``None``."""

        known = self._entry(value)
        return known.unchanged if known is not None and known.tensor() is value else None


def _part_unwritten(known: _Written, value: Any) -> bool:
    """Whether the stores of the launches that wrote ``value`` (itself, not a view) left some of it unwritten."""

    told = known.stores_known and known.tensor() is value and known.unchanged is not None
    return bool(told and known.unchanged.any())


def _storage_object(value: Any) -> Any:
    """``value``'s storage (one Python object while any tensor on it lives), or ``None`` for what has none."""

    try:
        storage = value.untyped_storage()
    except (AttributeError, RuntimeError, TypeError, NotImplementedError):
        return None
    return storage if storage.data_ptr() else None
