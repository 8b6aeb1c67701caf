"""Kernel-launch tracking: which of the script's own Triton kernels wrote into which of their tensors.

A launch ``kernel[grid](...)`` of a Triton kernel defined in the script's folder (the script or a module beside
it; Inductor's generated kernels live elsewhere and launch otherwise) is noted when it wrote into one of its
tensor arguments: a kernel reduced to ``pass``, or launched on an empty grid, runs but computes nothing, and an
assert on its output then fails for another reason. Under Triton's interpreter, the addresses each launch
touched outside the tensors it was given are noted too (``strays``).
"""

from __future__ import annotations

import ast
import collections
import functools
import inspect
import os
import textwrap
from typing import Any, Callable

from oracles.kernel_writes import KernelWrites
from oracles.arguments import tensors_in
from oracles.evidence import aside, draws_of, launch_event, operations_of
from oracles.kernel_replay import FirstLaunches
from oracles.kernel_memory import InterpretedAccesses, loaded_from, note_reach, out_of_bounds, stored_elements
from oracles.settings import launch_settings

# Launches of one kernel whose tensors are compared before and after, to tell which ones it wrote.
_LAUNCHES_COMPARED = 8
# Tensors of one kernel launch larger than this in all are not copied: the launch counts as one that wrote.
_SNAPSHOT_LIMIT_BYTES = 256 * 2**20


class KernelLaunches:
    """Patches ``KernelInterface.__getitem__`` while installed; what the launches wrote, in its attributes."""

    def __init__(self, script_path: str | None):
        self.folder = os.path.dirname(os.path.abspath(script_path)) if script_path else None
        self.kernels: list[str] = []  # kernels that wrote into a tensor argument, in order, once each
        self.writes = KernelWrites()  # the tensors those kernels wrote into
        # (kernel, "reads" or "writes", parameter) -> (elements past the end, before the start).
        self.reaches: dict[tuple[str, str, str], tuple[int, int]] = {}
        self._accesses = InterpretedAccesses()
        self._launches: collections.Counter[str] = collections.Counter()
        self._grids: dict[str, set[int | None]] = collections.defaultdict(set)  # kernel -> its launches' programs
        # The first launches the reducer's stage for compared kernels records or replays (oracles.kernel_replay).
        self.first_launches = FirstLaunches.requested()
        self._real_getitem: Any = None

    def install(self) -> None:
        try:
            from triton.runtime.jit import KernelInterface
        except ImportError:
            return
        real = KernelInterface.__getitem__
        tracker = self

        def getitem(kernel: Any, grid: Any) -> Any:
            fn, interpreted = kernel, False
            while not hasattr(fn, "__code__") and hasattr(fn, "fn"):  # through autotuner and heuristics wrappers
                interpreted = interpreted or type(fn).__module__.startswith("triton.runtime.interpreter")
                fn = fn.fn
            code = getattr(fn, "__code__", None)
            launch = real(kernel, grid)
            ours = code is not None and tracker.folder and os.path.dirname(os.path.abspath(code.co_filename)) == tracker.folder
            if not ours:
                return launch
            tracker._grids[fn.__name__].add(_programs(grid))
            return lambda *args, **kwargs: tracker._launch_and_note(fn, launch, interpreted, args, kwargs, kernel)

        self._real_getitem = real
        KernelInterface.__getitem__ = getitem
        self._accesses.install()

    def uninstall(self) -> None:
        if self._real_getitem is not None:
            from triton.runtime.jit import KernelInterface

            KernelInterface.__getitem__ = self._real_getitem
            self._real_getitem = None
            self._accesses.uninstall()

    def clear(self) -> None:
        self.kernels.clear()
        self.writes.clear()
        self.reaches.clear()
        self._grids.clear()

    def one_grids(self) -> tuple[tuple[str, int], ...]:
        """(kernel, programs) for each kernel every launch of which had the same number of programs, on one
        axis (``source.passes.kernels.launches.launches_as_run`` reads it as the grid)."""

        return tuple(sorted((k, next(iter(g))) for k, g in self._grids.items() if len(g) == 1 and None not in g))

    def strays(self) -> list[str]:
        """``["rms_norm_kernel reads 1 past weight_ptr, 1 past x_ptr"]``: per kernel and kind of access, how far
        past (or before) the tensors it was given its launches reached (see ``reaches``)."""

        grouped: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
        for (kernel, verb, name), (past, before) in sorted(self.reaches.items()):
            reach = [f"{past} past" if past else "", f"{before} before" if before else ""]
            grouped[kernel, verb].append(f"{' and '.join(r for r in reach if r)} {name}")
        return [f"{kernel} {verb} {', '.join(names)}" for (kernel, verb), names in grouped.items()]

    def _launch_and_note(
        self, fn: Any, launch: Callable[..., Any], interpreted: bool, args: tuple, kwargs: dict, kernel: Any
    ) -> Any:
        with aside():  # the snapshots' comparisons are ours; what the kernel wrote is told by KernelWrites
            bound = _bound(fn, args, kwargs)
            if self.first_launches is not None:
                options = {k: v for k, v in kwargs.items() if k not in bound}
                self.first_launches.on_launch(
                    fn.__name__, bound,
                    lambda grid: lambda **given: self._real_getitem(kernel, grid)(**given, **options),
                )
            return self._launch_and_note_aside(fn, launch, interpreted, args, kwargs, bound)

    def _launch_and_note_aside(
        self, fn: Any, launch: Callable[..., Any], interpreted: bool, args: tuple, kwargs: dict, bound: dict[str, Any]
    ) -> Any:
        values = [*args, *kwargs.values()]
        # A kernel launched in a loop: after a few launches, the tensors given through the parameters it wrote
        # through in the launches compared count as written (every tensor, where those told none) rather than each
        # launch being copied and compared. A tensor it only reads is no output of it: a model's activations
        # read by the check's launch after training are what its reference computes from too.
        before = _snapshot_tensors(values) if self._launches[fn.__name__] < _LAUNCHES_COMPARED else None
        self._launches[fn.__name__] += 1
        tensors = tensors_in(values)
        with self._accesses.recording(interpreted, tensors, noting=before is not None) as accesses:
            result = launch(*args, **kwargs)
        if before is None:
            through = self.writes.parameters_written(fn.__name__)
            given = [t for name, t in _tensor_parameters(bound).items() if name in through]
            written = [(tensor, None) for tensor in (given or tensors)]
        else:
            written = [
                (t, unchanged)
                for t, copy in before
                if (unchanged := _unchanged(t, copy, stored_elements(t, accesses))) is not None
            ]
            # Which parameters a kernel writes through is told by the launches compared, not by the later ones,
            # where every tensor counts as written.
            parameters = _tensor_parameters(bound)
            self.writes.note_parameters(fn.__name__, [name for name, t in parameters.items() if any(t is w for w, _ in written)])
            for (verb, name), reach in out_of_bounds(accesses, parameters).items():
                note_reach(self.reaches, (fn.__name__, verb, name), reach)
        for tensor in tensors:
            self.writes.note_passed(tensor)
        # What computed a tensor the launch only wrote into is no part of what it computed (`out = x * 0.5` as
        # the output buffer), nor what it was drawn from: only the tensors it read tell its inputs (their draws
        # are followed by torch's operations, which the launch's writes do not change).
        read = [t for t in tensors if loaded_from(t, accesses)]
        settings, computed_by = launch_settings(bound, _constexprs(fn), _divisors(fn)), operations_of(read)
        drawn, event = draws_of(read), launch_event(read)
        launch = (f"({settings})" if settings else "") + (f" of {'+'.join(sorted(computed_by))}" if computed_by else "")
        for tensor, unchanged in written:
            self.writes.note(tensor, fn.__name__, unchanged, launch, drawn, stores_known=accesses is not None, event=event)
        if written and fn.__name__ not in self.kernels:
            self.kernels.append(fn.__name__)
        return result


def _snapshot_tensors(values: list[Any]) -> list[tuple[Any, Any]] | None:
    """(tensor, copy of its bytes) for each tensor argument; ``None`` when they are too large to copy."""

    tensors = tensors_in(values)
    if sum(t.numel() * t.element_size() for t in tensors) > _SNAPSHOT_LIMIT_BYTES:
        return None
    return [(t, _bytes_of(t).clone()) for t in tensors]


def _bytes_of(tensor: Any) -> Any:
    import torch

    flat = tensor.detach().contiguous().reshape(-1)
    return flat.view(torch.uint8) if flat.numel() else flat


def _unchanged(tensor: Any, before: Any, stored: Any = None) -> Any:
    """The flat mask of ``tensor``'s elements whose bytes are as in ``before`` and, where the launch's stores
    are known (``stored``, see ``oracles.kernel_memory``), that no store wrote; ``None`` if it wrote none."""

    import torch

    after = _bytes_of(tensor)
    if not tensor.numel() or (torch.equal(after, before) and (stored is None or not bool(stored.any()))):
        return None
    unchanged = (after == before).reshape(tensor.numel(), -1).all(dim=1)
    return unchanged if stored is None else unchanged & ~stored


def _bound(fn: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The launch's arguments by the kernel's parameter names (``{}`` if they do not bind); launch options
    (``num_warps=4``) are not the kernel's parameters."""

    try:
        signature = inspect.signature(fn)
        given = {k: v for k, v in kwargs.items() if k in signature.parameters}
        return dict(signature.bind_partial(*args, **given).arguments)
    except (TypeError, ValueError):
        return {}


def _tensor_parameters(bound: dict[str, Any]) -> dict[str, Any]:
    import torch

    return {name: value for name, value in bound.items() if isinstance(value, torch.Tensor)}


def _constexprs(fn: Any) -> set[str]:
    """The names of a kernel function's ``tl.constexpr`` parameters (block sizes, flags), as annotated."""

    annotations = getattr(fn, "__annotations__", {}) or {}
    return {name for name, annotation in annotations.items() if "constexpr" in str(annotation)}


def _divisors(fn: Any) -> frozenset[str]:
    """The parameters a kernel function divides by or takes a remainder of (``offs // n_cols``)."""

    code = getattr(fn, "__code__", None)
    return _divisors_of(code) if code is not None else frozenset()


@functools.lru_cache(maxsize=256)
def _divisors_of(code: Any) -> frozenset[str]:
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(code)))
    except (OSError, TypeError, SyntaxError):
        return frozenset()
    parameters = set(code.co_varnames[: code.co_argcount])
    return frozenset(
        node.right.id for node in ast.walk(tree)
        if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.FloorDiv, ast.Mod))
        and isinstance(node.right, ast.Name) and node.right.id in parameters
    )


def _programs(grid: Any) -> int | None:
    """How many programs a grid of one axis launches (``(g,)``, ``g``, ``(g, 1, 1)``); ``None`` for any other."""

    sizes = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
    if not sizes or not all(isinstance(size, int) for size in sizes) or any(size != 1 for size in sizes[1:]):
        return None
    return sizes[0]
