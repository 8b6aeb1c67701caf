"""What a candidate may cost to run: a candidate markedly slower or larger than the original is not a reduction.

Tokens are not the only measure of "smaller". Deleting `n_layer=2` from a library's config builds its default
model, twelve layers of it: fewer tokens, a repro three times slower to run and a gigabyte larger. A candidate
that shows the bug but whose run costs markedly more than the original's oracle runs is refused.

The bound is the original's, fixed before the reduction starts, not the best-so-far's: a verdict must depend
on the candidate alone, or the repro would change with ``-j`` (which candidates ran before which). The margins
are wide because run times are noisy on a loaded host: a refusal costs a token or two, a wrong one costs the
user every later run of the repro.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from minimizer.runner.plain import PlainRun, cost_of
from minimizer.runner.run_types import RunResult

__all__ = ["CostBound", "plain_costs"]

# Markedly: more than SLOWER times the original's seconds plus SLOWER_SLACK (start-up and compile times vary
# by seconds from run to run); more than LARGER times its peak memory plus LARGER_SLACK_MB.
SLOWER, SLOWER_SLACK = 2.0, 5.0
LARGER, LARGER_SLACK_MB = 1.25, 256.0
# A repro's plain run reads slower than the original's beyond noise: over READS_SLOWER times its seconds plus
# READS_SLOWER_SLACK.
READS_SLOWER, READS_SLOWER_SLACK = 1.05, 0.3


@dataclass(frozen=True)
class CostBound:
    """The most a candidate's oracle run may take: ``seconds`` and ``peak_mb`` (``None``: not measured)."""

    seconds: float
    peak_mb: float | None

    @classmethod
    def of(cls, runs: Sequence[RunResult]) -> CostBound | None:
        """The bound set by the original's oracle runs (the slowest, the largest); ``None`` if none finished."""

        finished = [run for run in runs if run.completed]
        if not finished:
            return None
        peaks = [run.peak_mb for run in finished if run.peak_mb is not None]
        return cls(
            seconds=SLOWER * max(run.seconds for run in finished) + SLOWER_SLACK,
            peak_mb=LARGER * max(peaks) + LARGER_SLACK_MB if peaks else None,
        )

    def exceeded_by(self, run: RunResult) -> str | None:
        """Why ``run`` costs markedly more than the original, or ``None`` where it does not."""

        if run.peak_mb is not None and self.peak_mb is not None and run.peak_mb > self.peak_mb:
            return f"its run peaked at {run.peak_mb:.0f} MB, over the {self.peak_mb:.0f} MB the original allows"
        if run.completed and run.seconds > self.seconds:
            return f"its run took {run.seconds:.1f} s, over the {self.seconds:.1f} s the original allows"
        return None


def plain_costs(
    original: Sequence[PlainRun], repro: Sequence[PlainRun], side_by_side: Callable[[], list[PlainRun]]
) -> dict:
    """What a plain run of the original and of the repro costs: ``{"original", "repro"}``, from their plain runs
    in the check and confirm stages, or from ``side_by_side`` (a run of each, at once).

    Those runs are not alike: the user's compile caches already hold the original's kernels (it ran before:
    a 12 s cold run of a corpus program takes 5.5 s warm), the repro's kernels are new, and its runs go at once.
    A repro that reads slower by them beyond a few percent is run again beside the original (at once, with two
    jobs or more), both caches warm and both under the same load, and those two runs stand (``"again": true``).
    Within that noise the figures stand as they are: measuring again costs two more plain runs, 35 s where a
    library's import takes 10 (at once, half of that: run one after the other they were a fifth of a small
    script's reduction)."""

    cost = {"original": cost_of(list(original)), "repro": cost_of(list(repro))}
    if cost["repro"]["seconds"] <= READS_SLOWER * cost["original"]["seconds"] + READS_SLOWER_SLACK:
        return cost
    again = side_by_side()
    return {"original": cost_of(again[:1]), "repro": cost_of(again[1:]), "again": True}
