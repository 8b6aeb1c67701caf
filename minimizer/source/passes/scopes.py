"""A module's scopes, computed once and shared by the passes that ask: its libcst metadata, and where a name seen
from a scope resolves."""

from __future__ import annotations

import functools

import libcst as cst
from libcst.metadata import GlobalScope, MetadataWrapper

__all__ = ["binds_locally", "metadata"]


@functools.lru_cache(maxsize=64)
def metadata(module: cst.Module) -> MetadataWrapper:
    """The module's metadata wrapper, shared: every pass that asks for scopes or contexts of the same module
    (the reducer's current best) gets them computed once. Its nodes are the module's own (no copy)."""

    return MetadataWrapper(module, unsafe_skip_copy=True)


def binds_locally(scope, name: str) -> bool:
    """Whether `name` seen from `scope` may resolve to something other than a module-level binding or builtin."""

    while scope is not None and not isinstance(scope, GlobalScope):
        if scope.assignments[name]:
            return True
        scope = scope.parent
    return False
