"""After the culprit: where a backend cheaper than Inductor shows the bug (the ladder's first rung that does:
``eager``, ``aot_eager``, ``aot_eager_decomp_partition``), the repro compiles with it, written into its code, so
the code itself says where the bug lives and the repro runs without an Inductor compile. Kept only where plain
python fails with it as the repro claims, every run."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from minimizer.source.compile_backend import with_backend_written
from minimizer.stages.confirm import Confirmation
from minimizer.stages.culprit import CHEAPER_THAN_INDUCTOR, Culprit

if TYPE_CHECKING:
    from minimizer.runner.run_types import RunSettings
    from minimizer.runs import Runs


def with_the_cheapest_backend(runs: Runs, confirmation: Confirmation, culprit: Culprit | None, settings: RunSettings) -> Confirmation:
    """``confirmation`` of the repro compiled with the culprit's backend, where that is cheaper than Inductor and
    plain python fails with it as claimed; else as it is."""

    if culprit is None or culprit.backend not in CHEAPER_THAN_INDUCTOR or not confirmation.python_fails:
        return confirmation
    written = with_backend_written(confirmation.text, culprit.backend)
    if written is None:
        return confirmation
    plain = runs.call_all([lambda: runs.plain(written, settings.limits) for _ in confirmation.plain])
    if not all(run.failure == confirmation.expected for run in plain):
        runs.progress.message(f"backend={culprit.backend!r} written into the repro fails otherwise under plain python: not kept")
        return confirmation
    runs.progress.message(f"the repro compiles with backend={culprit.backend!r}: the code says where the bug lives")
    return dataclasses.replace(confirmation, text=written, plain=plain)
