"""What the user asked of one reduction (``minimizer reduce``'s options), with the limits they default to."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from minimizer.output import default_output_path

# The original may compile for a long time; candidates get a limit derived from how long the original took.
ORIGINAL_TIMEOUT = 600.0
MIN_CANDIDATE_TIMEOUT = 30.0
CANDIDATE_TIMEOUT_FACTOR = 3.0


@dataclass
class Options:
    script: Path
    output: Path | None = None
    report: Path | None = None
    oracle: str = "auto"
    timeout: float | None = None
    memory_mb: int = 8000
    jobs: int | None = 1  # None: chosen from the host's cores and GPUs (minimizer.runner.gpus.default_jobs)
    confirm: int = 2
    max_time: float | None = None
    seed: int = 0
    cold: bool = False  # a fresh interpreter per candidate instead of forks of a warm server
    # Workers that run candidate after candidate with CUDA started once (minimizer.runner.resident): "auto" (where
    # a GPU is visible), "always" (wherever the script allows it) or "never".
    resident: str = "auto"
    reducer: str = "auto"  # "source", "graph", or "auto": source, then graph where the model lives elsewhere
    share_verdicts: bool = True  # candidates whose compiled calls will be the same share a verdict
    # Reduce under the cheapest backend that shows the bug where the script takes Inductor's default
    # (minimizer.stages.culprit.cheapest_backend): three more runs of the original.
    cheaper_backend: bool = True
    culprit: bool = True  # name the compiler layer of the repro's bug (minimizer.stages.culprit): four more runs
    # Within Inductor, its subsystem (minimizer.stages.subsystem): the compiler bisector, some twenty runs more,
    # in at most this many seconds (not asked where its runs would not fit).
    subsystem: bool = True
    subsystem_seconds: float = 120.0
    ray: str | None = None  # run candidates as Ray tasks: "local", an address, or "auto" (RAY_ADDRESS)
    script_args: tuple[str, ...] = ()  # the script's own command line: ``python SCRIPT ARGS...``
    fixed_in: Path | None = None  # an interpreter where the bug is fixed: the repro must pass there (stages.fixed)

    @property
    def output_path(self) -> Path:
        return self.output or default_output_path(self.script)
