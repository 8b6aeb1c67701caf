"""Where the user names an interpreter in which the bug is fixed (``--fixed-in PYTHON``: a venv with the release
that fixed it), the repro must pass there, as the original does.

One release's runs cannot tell the bug from another cause of the same finding. Generated seed 589 (torch 2.5.1's
vectorized ``tanh``, pytorch#148241) shrank its input to four elements, where ``tanhshrink`` of a small value
cancels to a few ulps and one ulp of ``tanh`` flips ``atan2``'s phase between eager and compiled on the fixed
release too: the repro failed there, a different bug. The release that fixed the bug tells them apart. Where the
repro fails there, the latest step that plain python fails here as it failed the original, and that passes there,
takes its place (bisected over the steps, as ``stages.state.latest_step_python_fails`` does).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from minimizer.errors import MinimizerError
from minimizer.runner.run_types import Limits
from minimizer.stages.check import CheckReport
from minimizer.stages.state import latest_step_that

if TYPE_CHECKING:
    from minimizer.runs import Runs


def refuse_missing_interpreter(python: Path | None) -> None:
    """Before any run: a ``--fixed-in`` that names no interpreter."""

    if python is not None and not (python.is_file() and os.access(python, os.X_OK)):
        raise MinimizerError(f"--fixed-in {python}: not an executable file (give a python, e.g. venv/bin/python)")


def check_fixed_release(runs: Runs, source: str, limits: Limits) -> None:
    """Refuse a ``--fixed-in`` interpreter under which the original fails too: the bug is not fixed there."""

    python = runs.options.fixed_in
    if python is None:
        return
    runs.progress.message(f"running the original under {python}, where the bug is fixed")
    there = runs.plain(source, limits, python=str(python))
    if there.fails:
        raise MinimizerError(f"the original fails under --fixed-in {python} too ({there.describe()}): the bug is not fixed there")


def passing_where_fixed(runs: Runs, history: list[str], text: str, report: CheckReport, limits: Limits) -> str:
    """``text`` if it passes under the ``--fixed-in`` interpreter (or none was named); else the latest step of
    ``history`` (oldest first, the original first) that fails here as the original did and passes there."""

    python = runs.options.fixed_in
    if python is None:
        return text
    here = {run.failure for run in report.plain}

    def passes_there(step: str) -> bool:
        return not runs.plain(step, limits, python=str(python)).fails

    if passes_there(text):
        return text
    if len(here) != 1 or None in here:
        # No one failure of the original to hold a step to: say so rather than hand the repro back in silence.
        runs.progress.message(
            f"warning: the repro fails under {python} too, where the bug is fixed, and the original's plain runs "
            "disagree on how it fails: no step can be told to fail as it did; the repro is kept as it is"
        )
        return text
    failure = here.pop()
    runs.progress.message(f"the repro fails under {python} too, where the bug is fixed: looking for the latest step that passes there")

    def shows(step: str) -> bool:
        return runs.plain(step, limits).failure == failure and passes_there(step)

    low = latest_step_that(shows, history, 0, len(history))  # the original shows it (checked first)
    runs.progress.message(f"keeping step {low} of {len(history) - 1}: it fails here and passes where the bug is fixed")
    return history[low]
