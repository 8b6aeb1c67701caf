"""The in-process harness: patches ``torch.compile`` in the candidate's process to record what oracles need.

It is installed before the script runs and never changes what the script itself sees as results: the eager
side and the float64 reference of a call run on copies (inputs cloned, modules deep-copied, RNG forked), the
compiled side runs on the script's own inputs and its result (or exception) goes back to the script unchanged.
Gradients are taken with ``torch.autograd.grad`` so that no ``.grad`` of the script changes. Anything that goes
wrong inside the recording itself is swallowed: that call is simply not recorded.
"""

from __future__ import annotations

import collections
import contextlib
import copy
import os
import functools
import inspect
import time
from typing import Any, Callable, Iterator

from oracles.api import (
    NEEDS_CALLS,
    NEEDS_GRADS,
    NEEDS_KERNELS,
    NEEDS_REFERENCE,
    NEEDS_SAVED_TENSORS,
    CallRecord,
    InplaceViolation,
    SideResult,
)
from oracles.capture import exception_info
from oracles.compared import KernelWrites
from oracles.kernel_memory import InterpretedAccesses, note_reach, out_of_bounds, stored_elements
from oracles.hang import IN_COMPILED_CALL

# Saved tensors up to this many elements are fingerprinted by a full copy; larger ones by checksums.
_CLONE_LIMIT = 1 << 14
_MAX_VIOLATIONS = 100
# Calls after this many run compiled only: a training loop must not keep every step's outputs alive.
_MAX_CALLS = 100
# Backward nodes of ops whose own forward updates a tensor it saved, without a version bump and harmlessly
# (batch norm's running statistics, rrelu's noise): not an in-place bug.
_MUTATES_SAVED_INTERNALLY = ("BatchNorm", "RreluWithNoise")


# How ``Harness.only_compile`` names one output of the target: ``"losses output [2]"``.
ONLY_OUTPUT = " output "


class _NotRecordable(Exception):
    """A call whose eager side could change the script's state: it runs compiled only."""


class Harness:
    """Records compiled calls and saved-tensor fingerprints for the oracles' ``needs``."""

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
        self.seed = seed
        self.script_path = script_path
        self.used_compile = False
        self.calls: list[CallRecord] = []
        self.inplace_violations: list[InplaceViolation] = []
        self.kernels: list[str] = []
        # Wall seconds inside compiled calls (compiling and running them), and on their eager sides and reference.
        self.compiled_seconds = 0.0
        self.eager_sides_seconds = 0.0
        self.kernel_writes = KernelWrites()  # the tensors those kernels wrote into
        # Under Triton's interpreter: the addresses each launch loaded and stored, and what it touched outside the
        # tensors it was given: (kernel, "reads" or "writes", parameter) -> (elements past the end, before the start).
        self._kernel_accesses = InterpretedAccesses()
        self.kernel_strays: dict[tuple[str, str, str], tuple[int, int]] = {}
        self._real_getitem: Any = None
        self._real_compile: Callable[..., Any] | None = None
        self._eager_only = False
        self._tracing_only = False
        self._in_side = False  # running an eager or reference side: nested compiled calls run eagerly
        self._hooks_pushed = False
        self._real_disable: Callable[..., Any] | None = None
        self._real_enable: Callable[..., Any] | None = None

    # -- installation -------------------------------------------------------------------------------------

    def install(self) -> None:
        """Patch ``torch.compile`` (and push saved-tensor hooks when ``saved_tensors`` is needed)."""

        import torch

        torch._inductor.config.fallback_random = True  # random ops agree between eager and compiled
        self._real_compile = torch.compile
        harness = self

        def compile(model: Any = None, **kwargs: Any) -> Any:
            harness.used_compile = True
            if model is None:
                return lambda fn: compile(fn, **kwargs)
            if harness._eager_only:
                return model
            target = _target_name(model)
            if target not in harness.compiled_targets:
                harness.compiled_targets.append(target)
            if harness.only_compile is not None and target != harness.only_target:
                return model
            if harness.fingerprint is not None:
                harness.fingerprint.add_compile(kwargs)
            if harness._tracing_only:
                # Dynamo captures the same graphs whatever the backend; "eager" runs them without compiling.
                capture = {name: kwargs[name] for name in ("dynamic", "fullgraph") if name in kwargs}
                return harness._recording(model, harness._real_compile(model, backend="eager", **capture), "eager")
            compiled = harness._real_compile(model, **kwargs)  # type: ignore[misc]
            if harness.only_compile is not None and compiled is not model:
                return harness._outputs_told(model, compiled)
            if NEEDS_CALLS not in harness.needs or compiled is model:
                return compiled
            try:
                return harness._recording(model, compiled, _backend_name(kwargs.get("backend", "inductor")))
            except Exception:  # noqa: BLE001 - recording must never change the script's behaviour
                return compiled

        if self.fingerprint is not None:
            self.fingerprint.install()
        compile.__doc__ = torch.compile.__doc__
        compile.__wrapped__ = self._real_compile  # type: ignore[attr-defined]
        torch.compile = compile  # type: ignore[assignment]

        if NEEDS_KERNELS in self.needs:
            self._record_kernel_launches()

        if NEEDS_SAVED_TENSORS in self.needs:
            # A context manager would pop the hooks when the block ends; the whole script must run under them.
            torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)
            self._hooks_pushed = True
            self._step_aside_where_hooks_are_disabled()

    def uninstall(self) -> None:
        """Undo ``install``: restore ``torch.compile`` and pop the saved-tensor hooks."""

        import torch

        if self._real_compile is not None:
            torch.compile = self._real_compile  # type: ignore[assignment]
            self._real_compile = None
        if self._real_disable is not None:
            torch._C._autograd._saved_tensors_hooks_disable, torch._C._autograd._saved_tensors_hooks_enable = (
                self._real_disable, self._real_enable)
            self._real_disable = self._real_enable = None
        if self._hooks_pushed:
            torch._C._autograd._pop_saved_tensors_default_hooks()
            self._hooks_pushed = False
        if self.fingerprint is not None:
            self.fingerprint.uninstall()
        if self._real_getitem is not None:
            from triton.runtime.jit import KernelInterface

            KernelInterface.__getitem__ = self._real_getitem
            self._real_getitem = None
            self._kernel_accesses.uninstall()

    def _step_aside_where_hooks_are_disabled(self) -> None:
        """torch.func's grad/vjp/jacrev disable saved-tensor hooks for their body and raise when any are
        pushed; under plain python none are. Our hooks leave the stack while hooks are disabled and come
        back when they are enabled again, so such a transform runs as it does without us (unwatched)."""

        import torch

        autograd = torch._C._autograd
        real_disable, real_enable = autograd._saved_tensors_hooks_disable, autograd._saved_tensors_hooks_enable
        harness = self

        def disable(message: str) -> None:
            if harness._hooks_pushed:
                autograd._pop_saved_tensors_default_hooks()
                harness._hooks_pushed = False
            real_disable(message)

        def enable() -> None:
            real_enable()
            if not harness._hooks_pushed and harness._real_disable is not None:
                autograd._push_saved_tensors_default_hooks(harness._pack, harness._unpack)
                harness._hooks_pushed = True

        self._real_disable, self._real_enable = real_disable, real_enable
        autograd._saved_tensors_hooks_disable, autograd._saved_tensors_hooks_enable = disable, enable

    def strays(self) -> list[str]:
        """``["rms_norm_kernel reads 1 past weight_ptr, 1 past x_ptr"]``: per kernel and kind of access, how far
        past (or before) the tensors it was given its launches reached (see ``kernel_strays``)."""

        grouped: dict[tuple[str, str], list[str]] = collections.defaultdict(list)
        for (kernel, verb, name), (past, before) in sorted(self.kernel_strays.items()):
            reach = [f"{past} past" if past else "", f"{before} before" if before else ""]
            grouped[kernel, verb].append(f"{' and '.join(r for r in reach if r)} {name}")
        return [f"{kernel} {verb} {', '.join(names)}" for (kernel, verb), names in grouped.items()]

    def clear(self) -> None:
        """Forget what was recorded so far (after the eager pre-check, before the real run)."""

        self.calls.clear()
        self.inplace_violations.clear()
        self.kernels.clear()
        self.kernel_writes.clear()
        self.kernel_strays.clear()

    def _record_kernel_launches(self) -> None:
        """Note each launch ``kernel[grid](...)`` of a Triton kernel defined in the script's folder (the script
        or a module beside it; Inductor's generated kernels live elsewhere and launch otherwise) that wrote into
        one of its tensor arguments: a kernel reduced to ``pass``, or launched on an empty grid, runs but
        computes nothing, and an assert on its output then fails for another reason."""

        try:
            from triton.runtime.jit import KernelInterface
        except ImportError:
            return
        real = KernelInterface.__getitem__
        folder = os.path.dirname(os.path.abspath(self.script_path)) if self.script_path else None
        harness = self
        launches: collections.Counter[str] = collections.Counter()

        def getitem(kernel: Any, grid: Any) -> Any:
            fn, interpreted = kernel, False
            while not hasattr(fn, "__code__") and hasattr(fn, "fn"):  # through autotuner and heuristics wrappers
                interpreted = interpreted or type(fn).__module__.startswith("triton.runtime.interpreter")
                fn = fn.fn
            code = getattr(fn, "__code__", None)
            launch = real(kernel, grid)
            ours = code is not None and folder and os.path.dirname(os.path.abspath(code.co_filename)) == folder
            if not ours:
                return launch

            def launch_and_note(*args: Any, **kwargs: Any) -> Any:
                values = [*args, *kwargs.values()]
                # A kernel launched in a loop: after a few launches, every tensor argument counts as written
                # rather than each launch being copied and compared.
                before = _snapshot_tensors(values) if launches[fn.__name__] < _LAUNCHES_COMPARED else None
                launches[fn.__name__] += 1
                tensors = _tensors(values)
                with harness._kernel_accesses.recording(interpreted, tensors, noting=before is not None) as accesses:
                    result = launch(*args, **kwargs)
                if before is None:
                    written = [(tensor, None) for tensor in tensors]
                else:
                    written = [
                        (t, unchanged)
                        for t, copy in before
                        if (unchanged := _unchanged(t, copy, stored_elements(t, accesses))) is not None
                    ]
                    # Which parameters a kernel writes through is told by the launches compared, not by the
                    # later ones, where every tensor counts as written.
                    parameters = _tensor_parameters(fn, args, kwargs)
                    harness.kernel_writes.note_parameters(
                        fn.__name__, [name for name, t in parameters.items() if any(t is w for w, _ in written)]
                    )
                    for (verb, name), reach in out_of_bounds(accesses, parameters).items():
                        note_reach(harness.kernel_strays, (fn.__name__, verb, name), reach)
                for tensor in tensors:
                    harness.kernel_writes.note_passed(tensor)
                for tensor, unchanged in written:
                    harness.kernel_writes.note(tensor, fn.__name__, unchanged)
                if written and fn.__name__ not in harness.kernels:
                    harness.kernels.append(fn.__name__)
                return result

            return launch_and_note

        self._real_getitem = real
        KernelInterface.__getitem__ = getitem
        self._kernel_accesses.install()

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
            if torch.compiler.is_compiling() or harness._in_side:
                return run(*args, **kwargs)
            eager = None
            if harness.only_output:
                harness._in_side = True
                try:
                    with torch.random.fork_rng(devices=_rng_devices()):
                        eager = _eager_callable(model, copy_module=False)[0](*args, **kwargs)
                finally:
                    harness._in_side = False
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
        if self._in_side:
            return _eager_callable(model, copy_module=False)[0](*args, **kwargs)
        if len(self.calls) >= _MAX_CALLS:
            return compiled(*args, **kwargs)
        if self.fingerprint is not None and self.fingerprint.calls < _MAX_CALLS:
            self.fingerprint.add_call((args, kwargs), _named_params(model, _eager_callable(model, copy_module=False)[1]))
        if self._tracing_only:
            return compiled(*args, **kwargs)
        started = time.monotonic()
        try:
            record = self._record_eager_sides(target, model, args, kwargs)
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
                    record.index = len(self.calls)  # nested compiled calls may have been recorded meanwhile
                    self.calls.append(record)
            raise
        finally:
            self.compiled_seconds += time.monotonic() - started
        self._mark("")
        if record is not None:
            with contextlib.suppress(Exception):
                params = _named_params(model, _eager_callable(model, copy_module=False)[1])
                record.compiled = self._side_result(result, args, kwargs, params)
                record.index = len(self.calls)
                self.calls.append(record)
        return result

    def _mark(self, phase: str) -> None:
        if self.phase_file is not None:
            with contextlib.suppress(OSError):
                with open(self.phase_file, "w") as f:
                    f.write(phase)

    def _record_eager_sides(self, target: str, model: Any, args: tuple, kwargs: dict) -> CallRecord:
        """Run the eager side (and the float64 reference) on copies; the compiled side is filled in later."""

        record = CallRecord(index=len(self.calls), target=target, eager=SideResult(), compiled=SideResult())
        sides = [(False, "eager")] + ([(True, "reference")] if NEEDS_REFERENCE in self.needs else [])
        for to_double, name in sides:
            fn, module = _eager_callable(model, copy_module=True)
            if to_double and module is not None:
                module.double()
            side_args, side_kwargs = _copy_inputs((args, kwargs), to_double)
            params = _named_params(model, module)
            with self._eager_side(model, to_double):
                try:
                    out = fn(*side_args, **side_kwargs)
                except Exception as exc:  # noqa: BLE001 - the eager side's failure is data
                    result = SideResult(exception=exception_info(exc, self.script_path))
                else:
                    result = self._side_result(out, side_args, side_kwargs, params)
            if name == "eager":
                record.eager = result
            else:
                record.reference = result
            record.grad_names = self._grad_names(args, kwargs, params)
        return record

    @contextlib.contextmanager
    def _eager_side(self, model: Any, to_double: bool) -> Iterator[None]:
        """Run a side with the script's RNG state and shared tensors, both put back afterwards."""

        import torch

        shared = _SharedState(model)
        if shared.unsafe:
            raise _NotRecordable("the function refers to an optimizer")
        self._in_side = True
        try:
            with torch.random.fork_rng(devices=_rng_devices()):
                if to_double:
                    shared.to_double()
                yield
        finally:
            self._in_side = False
            shared.restore()

    def _side_result(self, out: Any, args: tuple, kwargs: dict, params: list[tuple[str, Any]]) -> SideResult:
        import torch
        from torch.utils._pytree import tree_flatten

        leaves, _ = tree_flatten(out)
        result = SideResult(
            outputs=[_detached(x) for x in leaves],
            requires_grad=[x.requires_grad if isinstance(x, torch.Tensor) else None for x in leaves],
            has_grad_fn=[x.grad_fn is not None if isinstance(x, torch.Tensor) else None for x in leaves],
        )
        if NEEDS_GRADS in self.needs:
            try:
                result.grads = self._grads(leaves, args, kwargs, params)
            except Exception as exc:  # noqa: BLE001
                result.grad_exception = exception_info(exc, self.script_path)
        return result

    def _grads(self, leaves: list[Any], args: tuple, kwargs: dict, params: list[tuple[str, Any]]) -> list | None:
        """Gradients of a fixed weighted sum of the floating outputs w.r.t. inputs and parameters needing grad.

        ``None`` when no output requires grad (no_grad, inference mode, or integer outputs only).
        """

        import torch

        outputs = [(i, x) for i, x in enumerate(leaves) if _is_float(x) and x.requires_grad]
        if not outputs:
            return None
        wrt = [t for t in _tensor_leaves((args, kwargs)) if _is_float(t) and t.requires_grad]
        wrt += [p for _, p in params if p.requires_grad]
        with torch.enable_grad():
            loss = sum(self._weighted_sum(i, x) for i, x in outputs)
            if not wrt:
                return []
            grads = torch.autograd.grad(loss, wrt, retain_graph=True, allow_unused=True)
        return [None if g is None else g.detach().clone() for g in grads]

    def _weighted_sum(self, index: int, out: Any) -> Any:
        import torch

        generator = torch.Generator().manual_seed(self.seed * 1000 + index)
        weights = torch.randn(out.shape, generator=generator, dtype=torch.float32).to(out.device, out.dtype)
        acc = torch.float64 if out.dtype == torch.float64 else torch.float32
        return (out * weights).sum(dtype=acc).to(torch.float64)

    def _grad_names(self, args: tuple, kwargs: dict, params: list[tuple[str, Any]]) -> list[str]:
        names = [f"input:{i}" for i, t in enumerate(_tensor_leaves((args, kwargs))) if _is_float(t) and t.requires_grad]
        return names + [f"parameter:{name}" for name, p in params if p.requires_grad]

    # -- saved tensors --------------------------------------------------------------------------------------

    def _pack(self, tensor: Any) -> Any:
        try:
            fingerprint = _Fingerprint.of(tensor)
        except Exception:  # noqa: BLE001
            fingerprint = None
        return (tensor, fingerprint)

    def _unpack(self, packed: Any) -> Any:
        tensor, fingerprint = packed
        if fingerprint is None:
            return tensor
        # Saved-tensor hooks switch off autograd's own version check; do it here so the script behaves the same.
        if tensor._version != fingerprint.version:
            raise RuntimeError(fingerprint.version_error(tensor))
        try:
            changed = fingerprint.changed(tensor)
        except Exception:  # noqa: BLE001
            changed = None
        if changed and len(self.inplace_violations) < _MAX_VIOLATIONS:
            node = _current_node_name()
            if not any(fragment in node for fragment in _MUTATES_SAVED_INTERNALLY):
                self.inplace_violations.append(InplaceViolation(grad_fn=node, detail=changed))
        return tensor


class _Fingerprint:
    """What a saved tensor looked like when autograd saved it: its version and a copy or checksums."""

    def __init__(self, tensor: Any):
        import torch

        self.version = tensor._version
        grad_fn = tensor.grad_fn
        self.grad_fn_id = id(grad_fn) if grad_fn is not None else None
        self.grad_fn_name = type(grad_fn).__name__ if grad_fn is not None else None
        self.output_nr = tensor.output_nr
        with torch.no_grad():
            data = tensor.detach()
            self.copy = data.clone() if data.numel() <= _CLONE_LIMIT else None
            self.sums = None if self.copy is not None else _checksums(data)

    @classmethod
    def of(cls, tensor: Any) -> _Fingerprint | None:
        import torch

        if torch.compiler.is_compiling() or type(tensor) not in (torch.Tensor, torch.nn.Parameter):
            return None  # fake, functional or traced tensors while a compiler traces
        if torch._C._len_torch_dispatch_stack() > 0 or tensor.layout != torch.strided or tensor.is_meta:
            return None
        if torch._C._functorch.is_functorch_wrapped_tensor(tensor) or tensor.is_inference():
            return None
        return cls(tensor)

    def changed(self, tensor: Any) -> str | None:
        """A description of how the contents changed since saving, or ``None`` if they did not."""

        import torch

        with torch.no_grad():
            data = tensor.detach()
            if self.copy is not None:
                if data.shape != self.copy.shape or data.dtype != self.copy.dtype:
                    return f"saved {list(self.copy.shape)} {self.copy.dtype} is now {list(data.shape)} {data.dtype}"
                same = data == self.copy
                if data.is_floating_point() or data.is_complex():
                    same |= torch.isnan(data) & torch.isnan(self.copy)
                if bool(same.all()):
                    return None
                count = int((~same).sum())
                return f"{count} of {data.numel()} elements of a saved {data.dtype} tensor changed at version {self.version}"
            now = _checksums(data)
            if all(_same_number(a, b) for a, b in zip(now, self.sums)):
                return None
            return f"checksums of a saved {data.dtype} tensor of {data.numel()} elements changed at version {self.version}"

    def version_error(self, tensor: Any) -> str:
        # Mirrors autograd's own message so that a script's exception reads the same with or without the hooks.
        described = f"[{tensor.type()} {list(tensor.shape)}]"
        node = _current_node()
        name = self.grad_fn_name if node is not None and id(node) == self.grad_fn_id else None
        if name is None and tensor.grad_fn is not None:
            name = type(tensor.grad_fn).__name__
        if name is not None:
            op = name[: name.rfind("Backward")] if "Backward" in name else name
            described += f", which is output {self.output_nr} of {op},"
        return (
            "one of the variables needed for gradient computation has been modified by an inplace operation: "
            f"{described} is at version {tensor._version}; expected version {self.version} instead. Hint: enable "
            "anomaly detection to find the operation that failed to compute its gradient, with "
            "torch.autograd.set_detect_anomaly(True, check_nan=False)."
        )


def _checksums(data: Any) -> tuple[float, float]:
    import torch

    if data.is_complex():
        total = torch.sum(data, dtype=torch.complex128)
        return (complex(total), float(torch.linalg.vector_norm(data)))
    if data.dtype == torch.bool:
        data = data.to(torch.uint8)
    as_double = data if data.is_floating_point() else data.double()
    return (float(torch.sum(as_double, dtype=torch.float64)), float(torch.linalg.vector_norm(as_double, dtype=torch.float64)))


def _same_number(a: Any, b: Any) -> bool:
    return a == b or (a != a and b != b)


def _current_node() -> Any:
    import torch

    try:
        return torch._C._current_autograd_node()
    except Exception:  # noqa: BLE001
        return None


def _current_node_name() -> str:
    node = _current_node()
    if node is None:
        return "unknown"
    try:
        return node.name()
    except Exception:  # noqa: BLE001
        return type(node).__name__


# -- helpers for the eager side ---------------------------------------------------------------------------


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


def _eager_callable(model: Any, copy_module: bool) -> tuple[Callable[..., Any], Any]:
    """The uncompiled callable for a side, and the module it runs (``None`` for a plain function).

    With ``copy_module`` a module, or the object a bound method belongs to (a module, an optimizer ...), is
    deep-copied so that the side cannot change the script's state.
    """

    import torch

    if isinstance(model, torch.nn.Module):
        module = _deepcopy(model) if copy_module else model
        return module, module
    if inspect.ismethod(model) and not isinstance(model.__self__, type):
        owner = _deepcopy(model.__self__) if copy_module else model.__self__
        return model.__func__.__get__(owner), owner if isinstance(owner, torch.nn.Module) else None
    return model, None


def _deepcopy(value: Any) -> Any:
    import torch

    with torch.inference_mode(False):
        return copy.deepcopy(value)


def _named_params(model: Any, module: Any) -> list[tuple[str, Any]]:
    """Parameters for gradients: the call's module's, else those of modules the function refers to."""

    import torch

    if module is not None:
        return list(module.named_parameters())
    params: list[tuple[str, Any]] = []
    for prefix, value in _referenced(model):
        if isinstance(value, torch.nn.Module):
            params += [(f"{prefix}.{name}", p) for name, p in value.named_parameters()]
    return params


def _referenced(model: Any) -> list[tuple[str, Any]]:
    """Modules, tensors and optimizers a plain function reaches through its globals or closure.

    The eager side of a plain function shares them with the script (only one level deep is looked at).
    """

    import torch

    if isinstance(model, torch.nn.Module) or inspect.ismethod(model):
        return []
    fn = inspect.unwrap(model) if callable(model) else model
    code = getattr(fn, "__code__", None)
    if code is None:
        return []
    kinds = (torch.nn.Module, torch.Tensor, torch.optim.Optimizer)
    found: dict[int, tuple[str, Any]] = {}
    globals_ = getattr(fn, "__globals__", {})
    for name in code.co_names:
        value = globals_.get(name)
        if isinstance(value, kinds):
            found.setdefault(id(value), (name, value))
    for name, cell in zip(code.co_freevars, getattr(fn, "__closure__", None) or ()):
        with contextlib.suppress(ValueError):
            if isinstance(cell.cell_contents, kinds):
                found.setdefault(id(cell.cell_contents), (name, cell.cell_contents))
    return list(found.values())


class _SharedState:
    """Tensors that a plain function shares with the script, to put back after an eager side ran on them.

    Covers tensors, module parameters and buffers it refers to directly. An optimizer's state cannot be put
    back cheaply, so a function that refers to one is not recorded (``unsafe``).
    """

    def __init__(self, model: Any):
        import torch

        self.unsafe = False
        self.tensors: list[tuple[Any, Any, Any, Any]] = []  # (tensor, its data, a copy, its .grad)
        self.buffers: list[tuple[Any, str, Any]] = []  # (module, key, buffer)
        seen: set[int] = set()

        def keep(t: Any) -> None:
            if isinstance(t, torch.Tensor) and id(t) not in seen and not t.is_inference():
                seen.add(id(t))
                self.tensors.append((t, t.data, t.detach().clone(), t.grad if t.is_leaf else None))

        for _, value in _referenced(model):
            if isinstance(value, torch.optim.Optimizer):
                self.unsafe = True
            elif isinstance(value, torch.nn.Module):
                for p in value.parameters():
                    keep(p)
                for m in value.modules():
                    for key, buf in m._buffers.items():
                        self.buffers.append((m, key, buf))
                        keep(buf)
            else:
                keep(value)

    def to_double(self) -> None:
        """Make the shared floating tensors float64 in place, leaving the script's ``.grad``s alone."""

        for t, data, _, _ in self.tensors:
            if data.is_floating_point():
                if t.is_leaf:
                    t.grad = None
                t.data = data.double()
        for m, key, buf in self.buffers:
            if buf is not None and buf.is_floating_point():
                m._buffers[key] = buf.double()

    def restore(self) -> None:
        import torch

        for m, key, buf in self.buffers:
            m._buffers[key] = buf
        for t, data, saved, grad in self.tensors:
            if t.data is not data:
                t.data = data
            if t.is_leaf and t.grad is not grad:
                t.grad = grad
            if not torch.equal(data, saved):
                data.copy_(saved)  # through .data: no version bump beyond the side's own write


def _copy_inputs(tree: Any, to_double: bool) -> Any:
    import torch
    from torch.utils._pytree import tree_map

    def copy_leaf(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            c = x.detach().clone()
            if to_double and c.is_floating_point():
                c = c.double()
            if x.requires_grad and (c.is_floating_point() or c.is_complex()):
                c.requires_grad_(True)
            return c
        if isinstance(x, torch.nn.Module):
            c = copy.deepcopy(x)
            return c.double() if to_double else c
        return x

    return tree_map(copy_leaf, tree)


def _tensor_leaves(tree: Any) -> list[Any]:
    import torch
    from torch.utils._pytree import tree_flatten

    return [x for x in tree_flatten(tree)[0] if isinstance(x, torch.Tensor)]


def _detached(x: Any) -> Any:
    import torch

    if isinstance(x, torch.Tensor):
        with torch.no_grad():
            return x.detach().clone()
    return x


def _is_float(x: Any) -> bool:
    import torch

    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _rng_devices() -> list[int]:
    import torch

    return list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []


# Launches of one kernel whose tensors are compared before and after, to tell which ones it wrote.
_LAUNCHES_COMPARED = 8
# Tensors of one kernel launch larger than this in all are not copied: the launch counts as one that wrote.
_SNAPSHOT_LIMIT_BYTES = 256 * 2**20


def _snapshot_tensors(values: list[Any]) -> list[tuple[Any, Any]] | None:
    """(tensor, copy of its bytes) for each tensor argument; ``None`` when they are too large to copy."""

    tensors = _tensors(values)
    if sum(t.numel() * t.element_size() for t in tensors) > _SNAPSHOT_LIMIT_BYTES:
        return None
    return [(t, _bytes_of(t).clone()) for t in tensors]


def _tensors(values: list[Any]) -> list[Any]:
    import torch

    return [v for v in values if isinstance(v, torch.Tensor)]


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


def _tensor_parameters(fn: Any, args: tuple, kwargs: dict) -> dict[str, Any]:
    """The launch's tensor arguments by the kernel's parameter names (``{}`` if they do not bind)."""

    import torch

    try:
        bound = inspect.signature(fn).bind_partial(*args, **kwargs).arguments
    except (TypeError, ValueError):
        return {}
    return {name: value for name, value in bound.items() if isinstance(value, torch.Tensor)}

