"""Files beside the script: every run sees the script's folder as ``python script.py`` would.

User repros load inputs saved next to them (``torch.load(os.path.dirname(__file__) + "/inputs.pt")``), read
data files by relative path and import sibling modules. Each candidate runs in its own temporary folder, so
that folder must hold the same files. At the start of a run the script's folder is copied once into a
snapshot (within a size budget; what does not fit is linked to the original), and every candidate's folder
gets a symbolic link per entry of the snapshot. A script that writes into its folder then writes into the
snapshot or its own folder, never into the user's.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

# Folders that are never part of what a script reads: version control, environments, caches.
_SKIPPED = frozenset({".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "node_modules", ".pytest_cache",
                      ".mypy_cache", ".hypothesis", ".tox", ".ruff_cache"})
COPY_BUDGET_BYTES = 256 * 2**20


def _size(path: Path) -> int:
    if path.is_symlink() or path.is_file():
        try:
            return path.lstat().st_size
        except OSError:
            return 0
    total = 0
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d not in _SKIPPED]
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                pass
        if total > COPY_BUDGET_BYTES:
            break
    return total


class Workspace:
    """A snapshot of the script's folder that candidates' folders link to.

    ``leave_out`` names entries of the folder that runs must not see (the script itself, which every run
    writes as its own candidate, and minimizer's outputs).
    """

    def __init__(self, folder: Path, *, leave_out: set[str] = frozenset(), budget: int = COPY_BUDGET_BYTES):
        self.origin = folder.resolve()
        self._tmp = tempfile.TemporaryDirectory(prefix="minimizer-beside-")
        self.folder = Path(self._tmp.name)
        self.linked_to_origin: list[str] = []
        left = budget
        for entry in sorted(self.origin.iterdir(), key=lambda p: p.name):
            if entry.name in leave_out or entry.name in _SKIPPED or entry.name.endswith(".min.py"):
                continue
            size = _size(entry)
            target = self.folder / entry.name
            if size <= left and not entry.is_symlink():
                try:
                    if entry.is_dir():
                        shutil.copytree(entry, target, symlinks=True, ignore=shutil.ignore_patterns(*_SKIPPED))
                    else:
                        shutil.copy2(entry, target)
                    left -= size
                    continue
                except OSError:
                    shutil.rmtree(target, ignore_errors=True)
            # Too large to copy (or unreadable as a copy): the run reads the user's own file.
            os.symlink(entry, target)
            self.linked_to_origin.append(entry.name)

    def populate(self, run_dir: Path) -> None:
        """Link every entry of the snapshot into ``run_dir`` (entries already there win)."""

        populate(self.folder, run_dir)

    def close(self) -> None:
        self._tmp.cleanup()


def populate(beside: str | Path, run_dir: Path) -> None:
    """Link every entry of ``beside`` into ``run_dir``, leaving names that ``run_dir`` already has."""

    for entry in os.scandir(beside):
        target = run_dir / entry.name
        if not os.path.lexists(target):
            os.symlink(entry.path, target)
