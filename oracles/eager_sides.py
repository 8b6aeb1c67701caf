"""The eager side and the float64 reference of a compiled call, run on copies so the script never sees them.

Inputs are cloned, modules (or the object a bound method belongs to) deep-copied, the RNG forked, and tensors a
plain function shares with the script through its globals or closure put back afterwards. Gradients are taken
with ``torch.autograd.grad`` of a fixed weighted sum of the outputs, so no ``.grad`` of the script changes.
"""

from __future__ import annotations

import contextlib
import copy
import inspect
from typing import Any, Callable, Iterator

from oracles.api import NEEDS_GRADS, NEEDS_REFERENCE, CallRecord, SideResult
from oracles.capture import exception_info


class NotRecordable(Exception):
    """A call whose eager side could change the script's state: it runs compiled only."""


class EagerSides:
    """Runs and records the sides of compiled calls for the oracles' ``needs``."""

    def __init__(self, needs: frozenset[str], seed: int, script_path: str | None):
        self.needs = needs
        self.seed = seed
        self.script_path = script_path
        # A side is running: compiled calls nested in it run eagerly.
        self.running = False

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """Mark a side as running (nested compiled calls run eagerly) for the block."""

        self.running = True
        try:
            yield
        finally:
            self.running = False

    def record(self, index: int, target: str, model: Any, args: tuple, kwargs: dict) -> CallRecord:
        """Run the eager side (and the float64 reference) on copies; the compiled side is filled in later."""

        record = CallRecord(index=index, target=target, eager=SideResult(), compiled=SideResult())
        sides = [(False, "eager")] + ([(True, "reference")] if NEEDS_REFERENCE in self.needs else [])
        for to_double, name in sides:
            fn, module = eager_callable(model, copy_module=True)
            if to_double and module is not None:
                module.double()
            side_args, side_kwargs = _copy_inputs((args, kwargs), to_double)
            params = named_params(model, module)
            with self._eager_side(model, to_double):
                try:
                    out = fn(*side_args, **side_kwargs)
                except Exception as exc:  # noqa: BLE001 - the eager side's failure is data
                    result = SideResult(exception=exception_info(exc, self.script_path))
                else:
                    result = self.side_result(out, side_args, side_kwargs, params)
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
            raise NotRecordable("the function refers to an optimizer")
        try:
            with self.aside(), torch.random.fork_rng(devices=rng_devices()):
                if to_double:
                    shared.to_double()
                yield
        finally:
            shared.restore()

    def side_result(self, out: Any, args: tuple, kwargs: dict, params: list[tuple[str, Any]]) -> SideResult:
        import torch
        from torch.utils._pytree import tree_flatten

        leaves, spec = tree_flatten(out)
        result = SideResult(
            outputs=[_detached(x) for x in leaves],
            requires_grad=[x.requires_grad if isinstance(x, torch.Tensor) else None for x in leaves],
            has_grad_fn=[x.grad_fn is not None if isinstance(x, torch.Tensor) else None for x in leaves],
            structure=str(spec),
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




def eager_callable(model: Any, copy_module: bool) -> tuple[Callable[..., Any], Any]:
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


def named_params(model: Any, module: Any) -> list[tuple[str, Any]]:
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


def rng_devices() -> list[int]:
    import torch

    return list(range(torch.cuda.device_count())) if torch.cuda.is_initialized() else []

