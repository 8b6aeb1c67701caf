"""Compiled bytecode for minimizer's own processes, where the Python installation keeps none for torch.

Some hosts keep no bytecode for torch: container images set ``PYTHONDONTWRITEBYTECODE=1`` and ship
site-packages without ``__pycache__`` (the GPU machine's image does). Every fresh interpreter then compiles
torch's sources again: on the H100 host ``import torch`` took 3.5 s and with Inductor's compiler 14-16 s, and
most of a graph-capture run's samples were CPython compiling torch to bytecode. Our own processes (the warm
server while it imports, a graph capture, the CPU-probe recorder) keep theirs in a folder of ours instead.

Nothing the script sees changes: the warm server puts the interpreter's bytecode settings back before it forks a
candidate, the environment is left alone (only the recorder, whose probes answer for the host, gets ours), and
plain-python runs are never touched. Where the installation has its bytecode, nothing here does anything.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import sys
from collections.abc import Iterator
from pathlib import Path

BYTECODE_CACHE = Path.home() / ".cache" / "minimizer" / "bytecode"


@functools.cache
def installation_keeps_none(package: str = "torch") -> bool:
    """Whether the package's bytecode is missing where this interpreter would look for it (and the user has not
    pointed Python elsewhere with ``PYTHONPYCACHEPREFIX``)."""

    if sys.pycache_prefix:
        return False
    spec = importlib.util.find_spec(package)
    if spec is None or not spec.origin:
        return False
    return not os.path.exists(importlib.util.cache_from_source(spec.origin))


@contextlib.contextmanager
def own_bytecode() -> Iterator[None]:
    """Meanwhile, modules this process imports are compiled once into ``BYTECODE_CACHE`` and loaded from there."""

    if not installation_keeps_none():
        yield
        return
    try:
        BYTECODE_CACHE.mkdir(parents=True, exist_ok=True)
    except OSError:
        yield
        return
    saved = sys.dont_write_bytecode, sys.pycache_prefix
    sys.dont_write_bytecode, sys.pycache_prefix = False, str(BYTECODE_CACHE)
    try:
        yield
    finally:
        sys.dont_write_bytecode, sys.pycache_prefix = saved


def own_process_environment(env: dict[str, str]) -> dict[str, str]:
    """``env`` for a fresh interpreter of ours that runs no user code: bytecode kept in ``BYTECODE_CACHE``."""

    if not installation_keeps_none():
        return env
    env = dict(env)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPYCACHEPREFIX"] = str(BYTECODE_CACHE)
    return env
