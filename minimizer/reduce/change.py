"""What a candidate changed in the text it was cut from, as a key: the same cut proposed again on a later base
(after another cut was taken elsewhere) gets the same key, so the answer it got before predicts the answer now.

Lines compare with their indentation stripped and blank lines ignored, so a cut keeps its key when an unrelated
step re-indents or joins the code around it. A change that touches only layout has no key.
"""

from __future__ import annotations

import difflib
import hashlib
import json


def change_key(base: str, candidate: str) -> str | None:
    """A short key for the lines ``candidate`` removed from ``base`` and the lines it added, or ``None``."""

    before = _lines(base)
    after = _lines(candidate)
    removed: list[str] = []
    added: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, before, after, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += before[i1:i2]
            added += after[j1:j2]
    if not removed and not added:
        return None
    described = json.dumps([sorted(removed), sorted(added)])
    return hashlib.blake2b(described.encode(), digest_size=8).hexdigest()


def _lines(text: str) -> list[str]:
    return [stripped for line in text.splitlines() if (stripped := line.strip())]
