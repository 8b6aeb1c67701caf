"""Verdicts shared between the candidates of one reduction, by the fingerprint of their compiled calls.

A folder of small JSON files, one per fingerprint (see ``oracles.fingerprint``), written by the candidate that
ran its compiled calls and read by later candidates whose calls will be the same. Candidates run in separate
processes, so the folder is the only place they meet; each file is written whole (temporary file, then rename),
so a reader sees a complete verdict or none.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Sequence


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
