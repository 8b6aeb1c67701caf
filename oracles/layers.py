"""Layers told apart by their parameters: the `linear` of `fc1` is not the `linear` of `fc2`.

The evidence follows values by the names of the operations that computed them (``oracles.evidence``). An
operation given a module's parameters (an ``nn.Parameter``: a layer's weight) is also named, inside the recorder,
by which parameters it was given (``linear#1401...``):

- applied alike to a kernel's output and to its reference after the launch (the same `head` on both sides of a
  check), a layer is no part of what the check compares: both sides lose it, and a repro may drop it from both;
- a layer both the launch's inputs and the reference went through (the `fc1` before the kernel) is the same
  input, as before; a layer of the same kind with other parameters (`fc2`) is neither, and a repro that drops it
  from one side only compares something else.

The identities never reach a signature or a report: ``told`` writes the names without them.
"""

from __future__ import annotations

import sys
from typing import Iterable

from oracles.arguments import shallow

__all__ = ["LAYER", "is_layer", "layer_key", "told", "told_item"]

LAYER = "#"


def layer_key(args: tuple, kwargs: dict) -> str:
    """``#<ids>``: the parameters an operation was given, by identity; ``""`` for an operation given none."""

    parameter = sys.modules["torch"].nn.Parameter
    ids = [str(id(v)) for v in shallow(args, kwargs) if isinstance(v, parameter)]
    return LAYER + "-".join(ids) if ids else ""


def is_layer(operation: str) -> bool:
    return LAYER in operation


def told(operations: Iterable[str]) -> list[str]:
    """The operations' names as a report tells them: without their parameters' identities, each once, sorted."""

    return sorted({o.split(LAYER)[0] for o in operations})


def told_item(item: str) -> str:
    """An origin's item (``kernel k(slope=0.1) of linear#1+linear#2``) as a report tells it (``... of linear``)."""

    if LAYER not in item:
        return item
    head, sep, operations = item.rpartition(" of ")
    if not sep:
        return item.split(LAYER)[0]
    return f"{head} of {'+'.join(told(operations.split('+')))}"
