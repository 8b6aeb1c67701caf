"""The reducer's follow-up: what a step made pointless, removed right after the step.

A step that bypasses `.to(device)` leaves `device = ...` unread; one that bypasses `router.eval()` leaves a bare
`router` statement. Waiting for the passes that remove these to come round again costs a round, which a
time-capped reduction may never get to.
"""

from __future__ import annotations

import libcst as cst

from minimizer.source.passes.candidates import try_build
from minimizer.source.passes.edit import remove_nodes
from minimizer.source.passes.statements.dead_code import definitions_left_dead
from minimizer.source.passes.statements.effectless import statements_left_idle
from minimizer.source.rendering import settled

__all__ = ["remove_what_the_step_left"]


def remove_what_the_step_left(before: cst.Module, after: cst.Module) -> cst.Module | None:
    """``after`` without the statements the step from ``before`` left doing nothing, then without the
    definitions left unread (also those only such a statement read); ``None`` if it left neither. What was
    already so before the step (kept because removing it loses the bug) is not tried again."""

    idle = statements_left_idle(before, after)
    trimmed = settled(try_build(lambda: remove_nodes(after, idle)) or after) if idle else after
    dead = definitions_left_dead(before, trimmed)
    if not dead:
        return trimmed if trimmed is not after else None
    return try_build(lambda: remove_nodes(trimmed, dead))
