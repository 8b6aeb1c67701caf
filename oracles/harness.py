"""The in-process harness: patches ``torch.compile`` in the candidate's process to record what oracles need.

It is installed before the script runs and never changes what the script itself sees as results: the eager
side and the float64 reference of a call run on copies (inputs cloned, modules deep-copied, RNG forked), the
compiled side runs on the script's own inputs and its result (or exception) goes back to the script unchanged.
Gradients are taken with ``torch.autograd.grad`` so that no ``.grad`` of the script changes. Anything that goes
wrong inside the recording itself is swallowed: that call is simply not recorded.
"""

import contextlib
import functools
import os
import time
from typing import Any, Callable, Iterator

from oracles.api import (
    NEEDS_CALLS, NEEDS_EVIDENCE, NEEDS_GRADS, NEEDS_KERNELS, NEEDS_SAVED_TENSORS, CallRecord, SideResult, draws_alike,
)
from oracles.capture import exception_info
from oracles.dynamo_optimize import OptimizeThroughCompile
from oracles.eager_ops import run_eagerly_where_asked
from oracles.forced_backend import with_forced_backend
from oracles.eager_sides import EagerSides, eager_callable, named_params, rng_devices
from oracles.evidence import EvidenceRecorder
from oracles.hang import IN_COMPILED_CALL
from oracles.kernel_launches import KernelLaunches
from oracles.saved_tensors import SavedTensorWatch

# Calls after this many run compiled only: a training loop must not keep every step's outputs alive.
_MAX_CALLS = 100


# How ``Harness.only_compile`` names one output of the target: ``"losses output [2]"``.
ONLY_OUTPUT = " output "


class Harness:
    """Records compiled calls, and (through its parts) saved-tensor fingerprints and kernel writes, for the
    oracles' ``needs``."""

    def __init__(
        self,
        needs: frozenset[str],
        seed: int = 0,
        script_path: str | None = None,
        fingerprint: Any = None,
        phase_file: str | None = None,
        only_compile: str | None = None,
    ):
        self.needs = frozenset(needs)
        # Compile only the target of this name (see ``_target_name``); every other runs eagerly. The script
        # oracle uses it to hold a generic assert to the one compiled call whose misbehaviour fails it. Given as
        # ``"target output [1]"`` (see ``ONLY_OUTPUT``), that target's calls also run eagerly and return the
        # eager outputs but the one at that path of the output, which comes from the compiled call.
        self.only_compile = only_compile
        self.only_target, _, self.only_output = (only_compile or "").partition(ONLY_OUTPUT)
        self.compiled_targets: list[str] = []  # every target passed to torch.compile, in order, once each
        # Under only_compile: the paths of the tensors the target's first call returned (``[0]``, ``['focal']``).
        self.compiled_outputs: list[str] = []
        # Where to mark that a compiled call is under way, its eager side done (read by the parent when it kills
        # a hanging run, see oracles.hang), or None.
        self.phase_file = phase_file
        # A CallFingerprint (oracles.fingerprint) fed every compile and recorded call, or None.
        self.fingerprint = fingerprint
        self.script_path = script_path
        self.used_compile = False
        self.calls: list[CallRecord] = []
        # Wall seconds inside compiled calls (compiling and running them), and on their eager sides and reference.
        self.compiled_seconds = 0.0
        self.eager_sides_seconds = 0.0
        self.sides = EagerSides(self.needs, seed, script_path)
        self.saved_tensors = SavedTensorWatch() if NEEDS_SAVED_TENSORS in self.needs else None
        self.launches = KernelLaunches(script_path)
        self.inplace_violations = self.saved_tensors.violations if self.saved_tensors else []
        self.kernels = self.launches.kernels
        self.kernel_writes = self.launches.writes
        folder = os.path.dirname(os.path.abspath(script_path)) if script_path else None
        self.evidence = (
            EvidenceRecorder(self.kernel_writes, folder, kernels_defined=_defines_kernels(folder))
            if NEEDS_EVIDENCE in self.needs else None
        )
        self._real_compile: Callable[..., Any] | None = None
        self._optimize = OptimizeThroughCompile()
        self._eager_only = False
        self._tracing_only = False
        self._donated_buffer: bool | None = None  # AOTAutograd's setting before ``install`` changed it

    # -- installation -------------------------------------------------------------------------------------

    def install(self) -> None:
        """Patch ``torch.compile``, and ``torch._dynamo.optimize`` through it (and push saved-tensor hooks when ``saved_tensors`` is needed)."""

        import torch

        if draws_alike(self.needs):
            torch._inductor.config.fallback_random = True
        if NEEDS_GRADS in self.needs:
            self._donated_buffer = _donate_buffers(False)
        run_eagerly_where_asked()  # the culprit's operators, one at a time (oracles.eager_ops)
        self._real_compile = torch.compile
        harness = self

        def compile(model: Any = None, **kwargs: Any) -> Any:
            harness.used_compile = True
            if model is None:
                return lambda fn: compile(fn, **kwargs)
            return model if harness._eager_only else harness._compiled(model, kwargs)

        if self.fingerprint is not None:
            self.fingerprint.install()
        compile.__doc__ = torch.compile.__doc__
        compile.__wrapped__ = self._real_compile  # type: ignore[attr-defined]
        torch.compile = compile  # type: ignore[assignment]
        self._optimize.install_through(compile)

        if NEEDS_KERNELS in self.needs:
            self.launches.install()
        if self.saved_tensors is not None:
            self.saved_tensors.install()
        if self.evidence is not None:
            self.evidence.install()  # last: from here on the script's torch operations are followed

    def _compiled(self, model: Any, kwargs: dict) -> Any:
        """What the patched ``torch.compile(model, **kwargs)`` returns: ``_compiled_call``'s callable, whose
        outputs are followed as the compiled call's where the evidence is recorded."""

        compiled = self._compiled_call(model, kwargs)
        if self.evidence is None or compiled is model:
            return compiled
        evidence = self.evidence

        def call(run: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
            evidence.note_inputs(args, kwargs, model)
            with evidence.outside_the_mode():
                out = run(*args, **kwargs)
            evidence.note_output(out)
            return out

        return _each_call_through(model, compiled, call)

    def _compiled_call(self, model: Any, kwargs: dict) -> Any:
        kwargs = with_forced_backend(kwargs)
        target = _target_name(model)
        if target not in self.compiled_targets:
            self.compiled_targets.append(target)
        if self.only_compile is not None and target != self.only_target:
            return model
        if self.fingerprint is not None:
            self.fingerprint.add_compile(kwargs)
        if self._tracing_only:
            # Dynamo captures the same graphs whatever the backend; "eager" runs them without compiling.
            capture = {name: kwargs[name] for name in ("dynamic", "fullgraph") if name in kwargs}
            return self._recording(model, self._real_compile(model, backend="eager", **capture), "eager")
        compiled = self._real_compile(model, **kwargs)  # type: ignore[misc]
        if self.only_compile is not None and compiled is not model:
            return self._outputs_told(model, compiled)
        if NEEDS_CALLS not in self.needs or compiled is model:
            return compiled
        try:
            return self._recording(model, compiled, _backend_name(kwargs.get("backend", "inductor")))
        except Exception:  # noqa: BLE001 - recording must never change the script's behaviour
            return compiled

    def uninstall(self) -> None:
        """Undo ``install``: restore ``torch.compile`` and pop the saved-tensor hooks."""

        import torch

        if self.evidence is not None:
            self.evidence.uninstall()
        if self._real_compile is not None:
            torch.compile = self._real_compile  # type: ignore[assignment]
            self._real_compile = None
        self._optimize.uninstall()
        if self._donated_buffer is not None:
            _donate_buffers(self._donated_buffer)
            self._donated_buffer = None
        if self.saved_tensors is not None:
            self.saved_tensors.uninstall()
        if self.fingerprint is not None:
            self.fingerprint.uninstall()
        self.launches.uninstall()

    def strays(self) -> list[str]:
        """``["rms_norm_kernel reads 1 past weight_ptr, 1 past x_ptr"]`` (see ``KernelLaunches.strays``)."""

        return self.launches.strays()

    def replay_differences(self) -> list[str]:
        """How the candidate's compared kernels wrote otherwise than the original's on its first launch, where
        the run was asked to replay it (``oracles.kernel_replay``)."""

        replayed = self.launches.first_launches
        return list(replayed.differences) if replayed is not None else []

    def clear(self) -> None:
        """Forget what was recorded so far (after the eager pre-check, before the real run)."""

        self.calls.clear()
        self.inplace_violations.clear()
        self.launches.clear()
        if self.evidence is not None:
            self.evidence.clear()

    def stop_fingerprinting(self) -> None:
        """Stop feeding the fingerprint (it keeps what it has): the real run's calls need not be hashed."""

        if self.fingerprint is not None:
            self.fingerprint.uninstall()
            self.fingerprint = None

    @contextlib.contextmanager
    def compile_disabled(self) -> Iterator[None]:
        """Within this block ``torch.compile`` returns what it is given: the script runs eagerly."""

        self._eager_only = True
        try:
            yield
        finally:
            self._eager_only = False

    @contextlib.contextmanager
    def tracing_only(self) -> Iterator[None]:
        """Within this block dynamo traces every compiled function but runs its graphs eagerly, and a compiled
        call only feeds the fingerprint: the run tells what the compiled calls will depend on, without compiling
        (see ``oracles.fingerprint``)."""

        self._tracing_only = True
        try:
            yield
        finally:
            self._tracing_only = False

    # -- recording compiled calls ---------------------------------------------------------------------------

    def _recording(self, model: Any, compiled: Any, backend: str) -> Any:
        """Return ``compiled`` wrapped so that each call is recorded; modules stay ``OptimizedModule``s."""

        target = _target_name(model)
        return _each_call_through(
            model, compiled, lambda run, args, kwargs: self._call(target, model, run, args, kwargs, backend)
        )

    def _outputs_told(self, model: Any, compiled: Any) -> Any:
        """``compiled``, wrapped so that the paths of the tensors its first call returns are noted (which outputs
        can be held apart), and, under ``only_output``, so that each call returns the eager outputs but that
        one. The eager twin runs first, on the same inputs (gradients then reach the script's tensors through
        both), its random numbers drawn from the same state the compiled call then draws from."""

        import torch

        harness = self

        def call(run: Callable[..., Any], args: tuple, kwargs: dict) -> Any:
            if torch.compiler.is_compiling() or harness.sides.running:
                return run(*args, **kwargs)
            eager = None
            if harness.only_output:
                with harness.sides.aside(), torch.random.fork_rng(devices=rng_devices()):
                    eager = eager_callable(model, copy_module=False)[0](*args, **kwargs)
            out = run(*args, **kwargs)
            if not harness.compiled_outputs:
                harness.compiled_outputs = [path for path, _ in _tensor_paths(out)]
            return out if eager is None else _one_leaf_from(out, eager, harness.only_output)

        return _each_call_through(model, compiled, call)
    def _call(
        self, target: str, model: Any, compiled: Callable[..., Any], args: tuple, kwargs: dict, backend: str
    ) -> Any:
        import torch

        if torch.compiler.is_compiling():
            return compiled(*args, **kwargs)
        if self.sides.running:
            return eager_callable(model, copy_module=False)[0](*args, **kwargs)
        if len(self.calls) >= _MAX_CALLS:
            return compiled(*args, **kwargs)
        if self.fingerprint is not None and self.fingerprint.calls < _MAX_CALLS:
            self.fingerprint.add_call((args, kwargs), named_params(model, eager_callable(model, copy_module=False)[1]))
        if self._tracing_only:
            return compiled(*args, **kwargs)
        started = time.monotonic()
        try:
            record = self.sides.record(len(self.calls), target, model, args, kwargs)
        except Exception:  # noqa: BLE001
            record = None
        self.eager_sides_seconds += time.monotonic() - started
        self._mark(f"{IN_COMPILED_CALL}{backend}|{target}")
        started = time.monotonic()
        try:
            result = compiled(*args, **kwargs)
        except Exception as exc:
            self._mark("")
            if record is not None:
                with contextlib.suppress(Exception):
                    record.compiled = SideResult(exception=exception_info(exc, self.script_path))
                    self._add(record)
            raise
        finally:
            self.compiled_seconds += time.monotonic() - started
        self._mark("")
        if record is not None:
            with contextlib.suppress(Exception):
                params = named_params(model, eager_callable(model, copy_module=False)[1])
                record.compiled = self.sides.side_result(result, args, kwargs, params)
                self._add(record)
        return result

    def _add(self, record: CallRecord) -> None:
        record.index = len(self.calls)  # nested compiled calls may have been recorded meanwhile
        self.calls.append(record)

    def _mark(self, phase: str) -> None:
        if self.phase_file is not None:
            with contextlib.suppress(OSError):
                with open(self.phase_file, "w") as f:
                    f.write(phase)


def _donate_buffers(donate: bool) -> bool | None:
    """Set whether AOTAutograd compiles backwards that donate their saved buffers; the setting it had (``None``:
    the release has none). The harness turns it off where it takes gradients: it takes the compiled side's
    (``retain_graph=True``) before the script's own ``backward()``, which a backward that donated its buffers
    refuses, a crash plain python never sees. Donation only reuses memory."""

    try:
        import torch._functorch.config as functorch_config
    except ImportError:
        return None
    before = getattr(functorch_config, "donated_buffer", None)
    if before is not None:
        functorch_config.donated_buffer = donate
    return before


# -- compiled targets and their outputs --------------------------------------------------------------


def _defines_kernels(folder: str | None) -> bool:
    """Whether a Python file of ``folder`` (the script's) may define a Triton kernel (it names triton), as
    ``KernelLaunches`` counts the script's own kernels: those defined there."""

    if folder is None:
        return False
    try:
        names = sorted(n for n in os.listdir(folder) if n.endswith(".py"))[:_MOST_FILES_READ]
    except OSError:
        return False
    for name in names:
        with contextlib.suppress(OSError, UnicodeDecodeError):
            with open(os.path.join(folder, name)) as f:
                if "triton" in f.read():
                    return True
    return False


_MOST_FILES_READ = 64


def _backend_name(backend: Any) -> str:
    """``torch.compile``'s ``backend`` as a name: the string, or the callable's name."""

    return backend if isinstance(backend, str) else getattr(backend, "__name__", type(backend).__name__)


def _target_name(model: Any) -> str:
    import torch

    if isinstance(model, torch.nn.Module):
        return type(model).__name__
    owner = getattr(model, "__self__", None)
    if isinstance(owner, torch.nn.Module):
        name = getattr(model, "__name__", "")
        return type(owner).__name__ if name in ("_call_impl", "__call__", "forward") else f"{type(owner).__name__}.{name}"
    name = getattr(model, "__qualname__", None) or getattr(model, "__name__", None) or type(model).__name__
    return name.rpartition("<locals>.")[2]


def _each_call_through(model: Any, compiled: Any, call: Callable[[Callable[..., Any], tuple, dict], Any]) -> Any:
    """``compiled`` with each call going through ``call(run, args, kwargs)``, ``run`` being the compiled callable;
    a compiled module stays the ``OptimizedModule`` it is, its ``forward`` wrapped."""

    import torch

    if isinstance(compiled, torch.nn.Module) and isinstance(model, torch.nn.Module):
        compiled_forward = compiled.forward

        def forward(*args: Any, **kwargs: Any) -> Any:
            return call(compiled_forward, args, kwargs)

        compiled.forward = forward
        return compiled

    @functools.wraps(compiled)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        return call(compiled, args, kwargs)

    return wrapped


def _tensor_paths(out: Any) -> list[tuple[str, Any]]:
    """(path, tensor) for each tensor in a call's output (``[1]``, ``['focal']``, ``.loss``)."""

    import torch
    from torch.utils._pytree import keystr, tree_flatten_with_path

    try:
        leaves, _ = tree_flatten_with_path(out)
    except Exception:  # noqa: BLE001 - an output pytree cannot take apart has no paths
        return []
    return [(keystr(path), leaf) for path, leaf in leaves if isinstance(leaf, torch.Tensor)]


def _one_leaf_from(compiled: Any, eager: Any, path: str) -> Any:
    """``eager`` with the tensor at ``path`` taken from ``compiled``; ``eager`` whole where the two differ in
    shape of pytree or ``path`` is gone (a candidate that lost the output: nothing compiled is seen)."""

    from torch.utils._pytree import keystr, tree_flatten_with_path, tree_unflatten

    try:
        eager_leaves, spec = tree_flatten_with_path(eager)
        compiled_leaves, compiled_spec = tree_flatten_with_path(compiled)
    except Exception:  # noqa: BLE001
        return eager
    if spec != compiled_spec:
        return eager
    return tree_unflatten([c if keystr(p) == path else e for (p, e), (_, c) in zip(eager_leaves, compiled_leaves)], spec)
