"""After the source reducer, for a script that checks its own Triton kernels: the tensors a compared kernel is
given as factories of what the run recorded, the compared kernels reduced with the values compared held, then
with their references, and their launches.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
from typing import TYPE_CHECKING

from minimizer.reduce.scheduler import OutOfTime
from minimizer.runner.run_types import RunSettings
from minimizer.source.frozen import GuardedMasks
from minimizer.stages.best_so_far import BestSoFar
from minimizer.stages.pin import Target
from minimizer.stages.reducers import reduce_source
from oracles.bug import same_bug
from oracles.kernel_replay import asking
from oracles.script import SAME_COMPARISON, SAME_DIFFERENCE

if TYPE_CHECKING:
    from minimizer.runs import Runs


def reduce_compared_kernels(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The kernels a failing comparison checks, which the source reducer left as they were, reduced with the
    values compared held (``oracles.script.same_comparison``): an edit that computes the same numbers where the
    script compares them keeps the bug (a hand-written repro drops a weight of ones, binds ``eps=0.0``), if it
    keeps the kernel's masks and its masked loads' ``other`` values as they were given where a mask may be the
    bug's line (``GuardedMasks``). The
    pinned signature is then the repro's own: which pointers a kernel reads past may have changed with its
    parameters."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    with tempfile.TemporaryDirectory(prefix="minimizer-launches-") as folder:
        replayed = _first_launches_recorded(runs, target, settings, os.path.join(folder, "launches.pt"))
        return _reduce_held_kernels(runs, text, target, settings, replayed, best, deadline)


def _first_launches_recorded(runs: Runs, target: Target, settings: RunSettings, path: str) -> RunSettings:
    """The settings of the stage for compared kernels: the values compared held, and each candidate's kernels
    replaying the original program's first launch of theirs (``oracles.kernel_replay``), recorded into ``path``
    by one run of the original now."""

    kernels = list(target.bug.compared_kernels)
    held = dataclasses.replace(settings, oracles=(SAME_COMPARISON,))
    runs.run(runs.source, dataclasses.replace(held, env=(*settings.env, asking("record", path, kernels))))
    if not os.path.exists(path):
        runs.progress.message("the original's first kernel launches are too large to replay: holding the values compared alone")
    return dataclasses.replace(held, env=(*settings.env, asking("replay", path, kernels)))


def _reduce_held_kernels(
    runs: Runs, text: str, target: Target, settings: RunSettings, held_settings: RunSettings, best: BestSoFar,
    deadline: float | None,
) -> str:
    held = _HeldRound(
        "kernels", SAME_COMPARISON, held_settings, _kernel_passes(), subject="the compared kernels",
        varies="the values it compares differ from run to run",
        says="reducing the compared kernels, with the values the script compares held",
    )
    return _reduce_held(runs, text, target, settings, best, deadline, held)


def reduce_kernels_with_their_references(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The compared kernels and the references they are compared with, reduced together where both apply an
    operation alike (``source.passes.kernels.paired``), with how the values compared differ held
    (``oracles.script.same_difference``); the kernels' other lines stay (no step's leftovers are swept: the line
    a fix mends may read them)."""

    from minimizer.source.passes.kernels.paired import bypass_alike_operators

    return _reduce_with_difference_held(
        runs, text, target, settings, best, deadline, "kernels with references", [bypass_alike_operators],
        subject="the compared kernels and their references",
        says="reducing the compared kernels with their references, with how their values differ held",
    )


def reduce_launches(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """The compared kernels' launches as a person writes them by hand, once every size is what it will be: one
    program over the elements (``source.passes.kernels.launches``), its block size bound (no other parameter: the line a
    fix mends may read it), masks that fence nothing dropped, the one program's index (``row = 0``) inlined and
    the arithmetic it leaves folded (``0 * 2 + cols`` -> ``cols``), the temporaries a kernel binds once and reads
    once inlined (not a name bound again: its steps are lines a fix may mend), a block of one element read as its
    scalar; with how the values compared differ held, as for the references."""

    from minimizer.source.passes.values.constants import fold_integer_arithmetic
    from minimizer.source.passes.names.inline import inline_kernel_temporaries, inline_literal_names
    from minimizer.source.passes.kernels.memory import drop_kernel_masks, one_element_blocks_as_scalars
    from minimizer.source.passes.names.known_shapes import fold_known_shapes
    from minimizer.source.passes.kernels.launches import block_sizes_only, launches_as_run
    from minimizer.source.passes.signatures.parameters import bind_constant_parameters

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    failed = runs.run(text, settings).exception  # the grids its launches had
    one_program = launches_as_run(dict(failed.launch_grids) if failed is not None else {})
    return _reduce_with_difference_held(
        runs, text, target, settings, best, deadline, "kernel launches",
        [fold_known_shapes, one_program, drop_kernel_masks, block_sizes_only(bind_constant_parameters),
         inline_literal_names, fold_integer_arithmetic, inline_kernel_temporaries, one_element_blocks_as_scalars],
        subject="the compared kernels' launches", says="making each compared kernel's launch one program",
    )


def _reduce_with_difference_held(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None,
    name: str, passes: list, *, subject: str, says: str,
) -> str:
    """A held round of ``passes`` (and the unused parameters and definitions they leave, kernels' lines kept)
    with how the values compared differ held, where the script compares a kernel's output."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    from minimizer.reduce.scheduler import Pass
    from minimizer.source.passes.statements.dead_code import remove_unused_definitions
    from minimizer.source.passes.kernels.paired import kernel_bodies_kept
    from minimizer.source.passes.signatures.parameters import remove_unused_parameters

    passes = [*passes, remove_unused_parameters, kernel_bodies_kept(remove_unused_definitions)]
    held = _HeldRound(
        name, SAME_DIFFERENCE, dataclasses.replace(settings, oracles=(SAME_DIFFERENCE,)), [Pass.of(p) for p in passes],
        subject=subject, varies="how the values differ changes from run to run", says=says, leftovers=False,
    )
    return _reduce_held(runs, text, target, settings, best, deadline, held)


@dataclasses.dataclass(frozen=True)
class _HeldRound:
    """A round of the source reducer on the compared kernels with the bug held tighter than by the script's
    signature (``spec``, run with ``settings``); ``name``: how the report's reducers name it."""

    name: str
    spec: str
    settings: RunSettings
    passes: list
    subject: str  # what stays as it is where nothing holds
    varies: str  # why nothing holds where two runs of the start differ
    says: str  # what the progress says as the round starts
    leftovers: bool = True


def _reduce_held(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None, held: _HeldRound
) -> str:
    """``held``'s round from ``text``; the pinned signature then the repro's own (which pointers a kernel reads
    past, what it is compared with, may have changed)."""

    # Twice: a kernel whose values vary from run to run (atomics) holds nothing.
    first, again = (r.verdict(held.spec) for r in runs.call_all([lambda: runs.run(text, held.settings)] * 2))
    if not first.fires or not same_bug(first.found, again.found):
        runs.progress.message(f"{held.subject} stay as they are: {first.detail if not first.fires else held.varies}")
        return text
    runs.progress.message(held.says)
    held_target = Target(held.spec, first.found, target.own_failure, operator=target.operator)
    try:
        reduced = reduce_source(
            runs, text, held_target, held.settings, best, deadline, kept=GuardedMasks.of(text, target.bug),
            named=None, passes=held.passes, leftovers=held.leftovers,
        )
    except OutOfTime:
        best.work.reducers.append(held.name)
        _repin(runs, best.best_text, target, settings)
        raise
    best.work.reducers += [held.name] if reduced != text else []
    _repin(runs, reduced, target, settings)
    return reduced


# A compared kernel's lines stay lines: an assignment merged into the next (`out = res + alpha * x; out = out + res`
# read as one expression) computes the same, but the line its author must mend is then no longer a line of it.
_MERGING_PASSES = frozenset({"inline_single_use_variables"})


def _kernel_passes() -> list:
    from minimizer.source.format import source_passes

    return [p for p in source_passes() if p.name not in _MERGING_PASSES]


def tensors_as_factories(
    runs: Runs, text: str, target: Target, settings: RunSettings, best: BestSoFar, deadline: float | None
) -> str:
    """Where a kernel's output is compared, each tensor the script computed at module level tried as a factory of
    the shape, dtype and device the run recorded (`source.passes.values.recorded`): the layers that made a kernel's
    input go, whatever they are, with what each step leaves unused."""

    if target.spec != "script" or not target.bug.compared_kernels:
        return text
    failed = runs.run(text, settings).exception
    if failed is None or not failed.module_tensors:
        return text
    from minimizer.reduce.scheduler import Pass
    from minimizer.source.passes.values.recorded import recorded_tensors_to_factories

    factories = Pass("recorded_tensors_to_factories", recorded_tensors_to_factories(failed.module_tensors))
    return reduce_source(runs, text, target, settings, best, deadline, passes=[factories], named=None)


def _repin(runs: Runs, text: str, target: Target, settings: RunSettings) -> None:
    """Pin the bug as ``text`` shows it, where that is the same bug (see ``reduce_compared_kernels``)."""

    verdict = runs.run(text, settings).verdict(target.spec)
    if verdict.fires and not same_bug(target.bug, verdict.found):
        runs.progress.message(f"pinned signature, as the repro shows it: {verdict.signature}")
        target.bug = verdict.found
