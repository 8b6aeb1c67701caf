"""What turns a source candidate down without running it: the static screen of `minimizer.source.viability`,
for oracles whose bug gets stated as code, the place to state it (`minimizer.source.statement`), and the
kernels a failing comparison checks, which stay as they are, or keep their masks where the values compared are held
(`minimizer.source.frozen`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from minimizer.source.frozen import FrozenKernels, GuardedMasks

from minimizer.source.statement import StatementPlace
from minimizer.source.viability import Viability


@dataclass
class SourceScreen:
    """``screen(candidate, best)``: why ``candidate`` cannot show the bug, given the best script so far, or None.

    Made of picklable parts, so that helper processes can run it (`minimizer.reduce.offload`).
    """

    viability: Viability
    place: StatementPlace
    frozen: FrozenKernels | GuardedMasks = field(default_factory=FrozenKernels)

    def __call__(self, candidate: str, best: str) -> str | None:
        return self.viability.why_not(candidate) or self.place.lost(best, candidate) or self.frozen.why_not(candidate)
