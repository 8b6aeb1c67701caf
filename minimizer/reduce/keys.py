"""How candidates are named: by their code tokens, so comments and layout don't cost an oracle call."""

from __future__ import annotations

import hashlib

from minimizer.metrics import code_tokens


def candidate_key(text: str) -> str:
    """Cache key: the code tokens, so comments and layout don't cost an oracle call."""

    try:
        return " ".join(code_tokens(text))
    except Exception:  # tokenize errors: fall back to the text itself
        return text


def short_key(text: str) -> str:
    """A short hash of ``candidate_key(text)``: names a candidate in the report's timeline."""

    return hashlib.sha1(candidate_key(text).encode()).hexdigest()[:12]
