"""A run asked to compile every call with one backend instead of the script's (``minimizer.stages.culprit``'s
ladder: does the bug show with ``eager``? with ``aot_eager``? ...), through the environment."""

from __future__ import annotations

import os
from typing import Any

BACKEND_VARIABLE = "MINIMIZER_BACKEND"
# The backend that writes down the aten operators of each graph (``oracles.eager_ops``), its graphs run eagerly.
RECORDING_OPERATORS = "record-ops"
# What only Inductor reads: another backend refuses a mode or Inductor options.
_INDUCTOR_ONLY = ("mode", "options")


def with_forced_backend(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``torch.compile``'s keywords with the backend the environment asks for, if it asks."""

    backend = os.environ.get(BACKEND_VARIABLE)
    if not backend:
        return kwargs
    kept = {k: v for k, v in kwargs.items() if backend == "inductor" or k not in _INDUCTOR_ONLY}
    if backend == RECORDING_OPERATORS:
        from oracles.eager_ops import recording_backend

        return kept | {"backend": recording_backend()}
    return kept | {"backend": backend}
