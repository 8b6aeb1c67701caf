"""Writing the user's outputs: atomically, so that a reader (or a crash) never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from minimizer.errors import MinimizerError


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step: a reader (or a crash) never sees a half-written file."""

    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def unwritable(path: Path, *, folder: bool = False) -> str | None:
    """Why ``path`` cannot be written (as a file, or with ``folder`` as a folder to write into), in a few words;
    ``None`` if it can. Asked before any run, so that a bad ``-o`` costs nothing."""

    if path.exists():
        if folder != path.is_dir():
            return "it is a folder" if path.is_dir() else "it is a file, not a folder"
        return None if os.access(path, os.W_OK) else "it is not writable"
    parent = path.parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, not a folder"
    return None if os.access(parent, os.W_OK) else f"{parent} is not writable"


def refuse_unwritable(*outputs: tuple[str, Path | None], folder: bool = False) -> None:
    """One ``MinimizerError`` line for the first of ``(option, path)`` that cannot be written (``None``: not
    asked for)."""

    for option, path in outputs:
        why = None if path is None else unwritable(path, folder=folder)
        if why is not None:
            raise MinimizerError(f"cannot write {option} {path}: {why}")
