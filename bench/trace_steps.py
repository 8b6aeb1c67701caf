"""Reduce as `python -m minimizer reduce ...` does, and also write the text of every accepted step to a folder:
STEPS_DIR/NNN-PASS.py, in the order the steps were taken. Two runs of one script (on CUDA and on the CPU, resident
workers or not) then show the first step where they part: `diff -r` the folders, or compare them file by file.

    STEPS_DIR=/tmp/steps python bench/trace_steps.py reduce program.py -o out.py --report r.json
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from minimizer.cli import app  # noqa: E402
from minimizer.stages.best_so_far import BestSoFar  # noqa: E402


def _traced(folder: Path):
    accepted = BestSoFar.accepted
    folder.mkdir(parents=True, exist_ok=True)

    def traced(self, text: str, size: int, pass_name: str) -> None:
        taken = sum(1 for _ in folder.iterdir())
        (folder / f"{taken:03d}-{pass_name}.py").write_text(text)
        accepted(self, text, size, pass_name)

    return traced


if __name__ == "__main__":
    BestSoFar.accepted = _traced(Path(os.environ.get("STEPS_DIR", "steps")))
    app(prog_name="minimizer")
