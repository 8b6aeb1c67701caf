"""Verdicts shared between the candidates of one reduction, by the fingerprint of their compiled calls.

``SharedVerdicts`` is a folder of small JSON files, one per fingerprint (see ``oracles.fingerprint``), written
by the candidate that ran its compiled calls and read by later candidates whose calls will be the same.
Candidates run in separate processes, so the folder is the only place they meet; each file is written whole
(temporary file, then rename), so a reader sees a complete verdict or none. ``SharingPayoff`` decides, in the
reducer's process, whether sharing is worth what it costs.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from minimizer.runner.run_types import RunResult


class SharedVerdicts:
    """``get``/``put`` the verdicts of the oracles ``oracles`` (with seed ``seed``) for a fingerprint key."""

    def __init__(self, folder: str | os.PathLike, oracles: Sequence[str], seed: int):
        self.folder = Path(folder)
        self._salt = json.dumps([list(oracles), seed])

    def get(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads(self._path(key).read_text())
        except (OSError, ValueError):
            return None

    def put(self, key: str, verdicts: dict[str, Any]) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=self.folder, suffix=".tmp")
        with os.fdopen(handle, "w") as out:
            json.dump(verdicts, out)
        os.replace(temporary, self._path(key))

    def _path(self, key: str) -> Path:
        name = hashlib.sha256((self._salt + key).encode()).hexdigest()[:40]
        return self.folder / f"{name}.json"


@dataclass
class SharingPayoff:
    """Whether sharing verdicts pays for its tracing, judged from the runs so far; and the report's figures.

    Sharing costs every candidate a traced run of its compiled functions before it compiles (``tracing``) and
    saves a candidate whose fingerprint is known its compile and run. Where compiling is cheap (a custom
    backend) the tracing can cost more than it saves: after ``warm_up`` traced runs, sharing is switched off
    for the rest of the stage as soon as the tracing spent exceeds the estimated saving (shared runs times the
    mean time the unshared ones took beyond tracing). Sharing never changes a verdict, so neither does this.
    """

    enabled: bool = True
    warm_up: int = 10
    traced: int = 0
    fingerprinted: int = 0
    shared: int = 0
    tracing_seconds: float = 0.0
    switched_off_after: int | None = None
    why_not: dict[str, int] = field(default_factory=dict)
    _compiled_seconds: float = 0.0
    _compiled_runs: int = 0

    def observe(self, result: RunResult) -> None:
        """Count one run of a candidate; may switch sharing off."""

        if result.tracing_seconds <= 0.0 and not result.shared_verdict:
            return
        self.traced += 1
        self.tracing_seconds += result.tracing_seconds
        if result.fingerprint is None:
            reason = (result.fingerprint_why_not or "the traced run raised")[:120]
            self.why_not[reason] = self.why_not.get(reason, 0) + 1
        else:
            self.fingerprinted += 1
            if result.shared_verdict:
                self.shared += 1
            else:
                self._compiled_seconds += max(result.seconds - result.tracing_seconds, 0.0)
                self._compiled_runs += 1
        if self.enabled and self.traced >= self.warm_up and self.tracing_seconds > self.saved_seconds:
            self.enabled = False
            self.switched_off_after = self.traced

    @property
    def saved_seconds(self) -> float:
        """Shared runs times what an unshared run took beyond its tracing (0 before any unshared run)."""

        if not self._compiled_runs:
            return 0.0
        return self.shared * self._compiled_seconds / self._compiled_runs

    def to_json(self) -> dict[str, Any]:
        return {
            "fingerprinted": self.fingerprinted,
            "shared": self.shared,
            "tracing_seconds": round(self.tracing_seconds, 1),
            "saved_seconds": round(self.saved_seconds, 1),
            "switched_off_after": self.switched_off_after,
            "why_not": self.why_not,
        }
