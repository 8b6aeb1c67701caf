"""Oracles: decide whether a recorded run of a candidate shows a bug, and which one (its signature).

An oracle is a named callable ``RecordedRun -> Verdict``. Oracles know nothing about reduction; the reducer
only asks "does it fire, and with which signature?".
"""

from oracles.api import CallRecord, ExceptionInfo, InplaceViolation, Oracle, RecordedRun, SideResult, Verdict, oracle

__all__ = [
    "CallRecord",
    "ExceptionInfo",
    "InplaceViolation",
    "Oracle",
    "RecordedRun",
    "SideResult",
    "Verdict",
    "oracle",
]
