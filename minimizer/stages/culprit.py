"""Which layer of the compiler the bug lives in: the repro run with every call compiled by one backend of a ladder,
cheapest first.

A maintainer who receives a repro asks first whether it fails with ``backend="eager"`` (Dynamo alone), with
``"aot_eager"`` (AOTAutograd's graphs, run eagerly), with ``"aot_eager_decomp_partition"`` (its decompositions and
partitioner too), or only with Inductor. The first backend whose run shows the same bug names the layer; where
none does, the bug needs the script's own backend or its compile options. A script that compiles nothing (its
own Triton kernel) has no layer to name.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from minimizer.source.compile_backend import scripts_backend
from oracles.forced_backend import BACKEND_VARIABLE

if TYPE_CHECKING:
    from minimizer.runner.run_types import RunSettings
    from minimizer.runs import Runs
    from minimizer.stages.pin import Target

# (backend, the layer a bug first shown by it lives in), cheapest first.
LADDER = (
    ("eager", "Dynamo"),
    ("aot_eager", "AOTAutograd"),
    ("aot_eager_decomp_partition", "decompositions and partitioner"),
    ("inductor", "Inductor"),
)
# Backends cheaper than Inductor, cheapest first: a bug one of them shows needs no Inductor compile per candidate.
CHEAPER_THAN_INDUCTOR = tuple(backend for backend, _ in LADDER[:-1])
THE_SCRIPTS_BACKEND = "the script's backend or compile options"
NOT_TOLD = "not told"


@dataclass
class Culprit:
    """The layer named, the backend that named it (where none did, the one the script names, as written, or ""),
    and each rung's answer in order."""

    layer: str
    backend: str = ""
    ladder: list[tuple[str, bool]] = field(default_factory=list)
    detail: str = ""
    subsystem: str = ""  # within Inductor, from its compiler bisector (``stages.subsystem``), where asked
    operator: str = ""  # within Inductor, the aten operator that, run eagerly, mends it (``stages.operator``)
    fused: tuple[str, ...] = ()  # the other operators that each mend it so: fused with it into one kernel

    def to_json(self) -> dict:
        return {
            "layer": self.layer,
            "backend": self.backend,
            "subsystem": self.subsystem,
            "operator": self.operator,
            "fused_with": list(self.fused),
            "detail": self.detail,
            "ladder": [{"backend": backend, "shows_the_bug": shown} for backend, shown in self.ladder],
        }

    def describe(self) -> str:
        """``AOTAutograd (eager no, aot_eager yes)``: the layer (with Inductor's subsystem where it was bisected:
        ``Inductor: post_grad_passes, application 1 (...)``), then each rung and whether it showed the same bug
        (the header's line; ``read_ladder`` reads it back)."""

        if self.layer == NOT_TOLD:
            return f"{NOT_TOLD}: {self.detail}"
        layer = f"{self.layer}: {self.subsystem}" if self.subsystem else self.layer
        if self.layer == THE_SCRIPTS_BACKEND and self.backend:
            layer = f"the script's backend {self.backend} or its compile options"
        layer += f", operator {self.operator}" if self.operator else ""
        if self.fused:  # named short (`add.Tensor`): the ladder must still fit the header's line
            shown = [name.removeprefix("aten.") for name in self.fused[:3]]
            layer += f" (fused with {', '.join(shown)}{', ...' if len(self.fused) > 3 else ''})"
        return f"{layer} ({', '.join(f'{backend} {_YES_NO[shown]}' for backend, shown in self.ladder)})"


_YES_NO = {True: "yes", False: "no"}
_DESCRIBED = re.compile(r"(?P<layer>.+?) \((?P<ladder>(?:[a-z_]+ (?:yes|no)(?:, )?)+)\)$")


def read_ladder(described: str) -> tuple[str, list[tuple[str, bool]]]:
    """``describe``'s text read back: the layer and the ladder (empty where it said why none was run)."""

    found = _DESCRIBED.match(described)
    if found is None:
        return described, []
    rungs = [rung.rsplit(" ", 1) for rung in found.group("ladder").split(", ")]
    return found.group("layer"), [(backend, answer == "yes") for backend, answer in rungs]


def name_the_culprit(runs: Runs, text: str, target: Target, settings: RunSettings, *, compiles: bool) -> Culprit:
    """The layer ``text``'s bug lives in, from its runs under each backend of ``LADDER`` (at once, then read in
    order); ``compiles``: whether the script calls ``torch.compile`` at all."""

    if not compiles:
        return Culprit(NOT_TOLD, detail="the script compiles nothing: the bug is in its own code or kernel")
    results = runs.call_all([lambda b=backend: runs.run(text, with_backend(settings, b)) for backend, _ in LADDER])
    ladder = [(backend, target.shown_by(result)) for (backend, _), result in zip(LADDER, results)]
    for (backend, layer), (_, shown) in zip(LADDER, ladder):
        if shown:
            return Culprit(layer, backend, ladder[: ladder.index((backend, True)) + 1])
    return Culprit(THE_SCRIPTS_BACKEND, scripts_backend(text), ladder)


def with_backend(settings: RunSettings, backend: str) -> RunSettings:
    """``settings`` with every compiled call of the run given ``backend`` (``oracles.forced_backend``)."""

    return dataclasses.replace(settings, env=(*settings.env, (BACKEND_VARIABLE, backend)))


def names_its_backend(text: str) -> bool:
    """Whether the script chooses its backend (``backend=...``, ``torch._dynamo.optimize(...)``) rather than take
    Inductor's default: its own choice is cheap already, or where the bug lives."""

    return "backend=" in text or "optimize(" in text


def cheapest_backend(runs: Runs, text: str, target: Target, settings: RunSettings) -> str | None:
    """The cheapest backend below Inductor whose run of ``text`` shows the same bug (runs at once, read in order),
    or ``None``: candidates that need no Inductor compile cost a fraction of those that do."""

    results = runs.call_all([lambda b=backend: runs.run(text, with_backend(settings, b)) for backend in CHEAPER_THAN_INDUCTOR])
    return next((b for b, result in zip(CHEAPER_THAN_INDUCTOR, results) if target.shown_by(result)), None)


def with_subsystem(
    culprit: Culprit, source: str, filename: str, beside: str | None, failure: str | None, seconds: float | None = None
) -> Culprit:
    """``culprit`` with the subsystem of Inductor its bug needs (``stages.subsystem``), where the ladder named
    Inductor, ``failure`` is what the repro claims under plain python, and torch ships the bisector, within
    ``seconds``; else as it is (``detail`` says why not, where it was worth asking)."""

    from minimizer.stages.subsystem import bisect_inductor, ships_the_bisector

    if culprit.layer != "Inductor" or not failure:
        return culprit
    if not ships_the_bisector():
        return dataclasses.replace(culprit, detail="this torch has no compiler bisector to name the subsystem")
    found = bisect_inductor(source, filename, beside, failure, total_seconds=seconds)
    if isinstance(found, str):
        return dataclasses.replace(culprit, detail=f"subsystem not named: {found}")
    return dataclasses.replace(culprit, subsystem=found.describe())
