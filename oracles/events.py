"""Suspect events: each compiled call and each launch of the script's kernels is an event, and what its inputs
came from is its history, not part of what it computed.

A value followed through the run (``oracles.evidence``) carries the events it comes from as origin items
(``@3``). An event remembers the events its inputs came from, transitively: a model trained through its kernel
for three steps feeds the check's launch weights from the three training launches, which are then that launch's
history. Where values from several events meet (``out - ref``, a comparison), those from events in the history
of another are history too, and count as no suspect's: the reference computed from the trained weights is a
reference, and removing the training keeps the comparison what it was. Independent events (a kernel launched
once per row, outputs concatenated) stay side by side.
"""

from __future__ import annotations

from collections.abc import Iterable

# How an origin set names an event it comes from.
EVENT = "@"


def events_in(origin: Iterable[str]) -> frozenset:
    return frozenset(item for item in origin if item.startswith(EVENT))


class Events:
    """The events of one run, each with the events its inputs came from."""

    def __init__(self) -> None:
        self._history: dict[str, frozenset] = {}

    def begin(self, inputs: Iterable[frozenset], after_all: bool = False) -> str:
        """A new event whose inputs have ``inputs`` origins; its origin item. ``after_all``: the event reads what
        no argument shows (a compiled function's globals), and every earlier event is its history."""

        earlier = frozenset(self._history) if after_all else frozenset()
        earlier |= frozenset().union(*(events_in(o) for o in inputs))
        event = f"{EVENT}{len(self._history) + 1}"
        self._history[event] = earlier.union(*(self._history.get(e, frozenset()) for e in earlier))
        return event

    def current(self, origins: list[frozenset]) -> list[frozenset]:
        """``origins`` with those from history emptied: an origin all of whose events are in the history of an
        event another origin comes from is no suspect's here. Origins without events are left as they are."""

        events = [events_in(o) for o in origins]
        if sum(bool(e) for e in events) < 2:
            return origins
        history = frozenset().union(*(self._history.get(e, frozenset()) for found in events for e in found))
        return [frozenset() if found and found <= history else o for o, found in zip(origins, events)]
