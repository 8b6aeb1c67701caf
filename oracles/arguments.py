"""Where the tensors are in what a torch function was given or returned: the evidence recorder, the draws it
follows and the kernel launches all walk arguments and results the same way."""

from __future__ import annotations

import sys
from typing import Any, Iterator


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
