"""Saved-tensor watch: autograd's saved tensors fingerprinted when saved and compared when used.

A compiled call (or a Triton kernel) that writes in place into a tensor autograd saved for backward corrupts
the gradients silently when the write bumps no version. The watch pushes saved-tensor hooks for the whole
script: each saved tensor is fingerprinted (a copy, or checksums when large) as it is saved, and compared when
backward unpacks it; a difference is an ``InplaceViolation``.
"""

from __future__ import annotations

from typing import Any, Callable

from oracles.api import InplaceViolation
from oracles.evidence import aside

# Saved tensors up to this many elements are fingerprinted by a full copy; larger ones by checksums.
_CLONE_LIMIT = 1 << 14
_MAX_VIOLATIONS = 100
# Backward nodes of ops whose own forward updates a tensor it saved, without a version bump and harmlessly
# (batch norm's running statistics, rrelu's noise): not an in-place bug.
_MUTATES_SAVED_INTERNALLY = ("BatchNorm", "RreluWithNoise")


class SavedTensorWatch:
    """Saved-tensor hooks for the whole script; what they found in ``violations``."""

    def __init__(self) -> None:
        self.violations: list[InplaceViolation] = []
        self._pushed = False
        self._real_disable: Callable[..., Any] | None = None
        self._real_enable: Callable[..., Any] | None = None

    def install(self) -> None:
        import torch

        # A context manager would pop the hooks when the block ends; the whole script must run under them.
        torch._C._autograd._push_saved_tensors_default_hooks(self._pack, self._unpack)
        self._pushed = True
        self._step_aside_where_hooks_are_disabled()

    def uninstall(self) -> None:
        import torch

        autograd = torch._C._autograd
        if self._real_disable is not None:
            autograd._saved_tensors_hooks_disable, autograd._saved_tensors_hooks_enable = (
                self._real_disable, self._real_enable)
            self._real_disable = self._real_enable = None
        if self._pushed:
            autograd._pop_saved_tensors_default_hooks()
            self._pushed = False

    def _step_aside_where_hooks_are_disabled(self) -> None:
        """torch.func's grad/vjp/jacrev disable saved-tensor hooks for their body and raise when any are
        pushed; under plain python none are. Our hooks leave the stack while hooks are disabled and come
        back when they are enabled again, so such a transform runs as it does without us (unwatched)."""

        import torch

        autograd = torch._C._autograd
        real_disable, real_enable = autograd._saved_tensors_hooks_disable, autograd._saved_tensors_hooks_enable
        watch = self

        def disable(message: str) -> None:
            if watch._pushed:
                autograd._pop_saved_tensors_default_hooks()
                watch._pushed = False
            real_disable(message)

        def enable() -> None:
            real_enable()
            if not watch._pushed and watch._real_disable is not None:
                autograd._push_saved_tensors_default_hooks(watch._pack, watch._unpack)
                watch._pushed = True

        self._real_disable, self._real_enable = real_disable, real_enable
        autograd._saved_tensors_hooks_disable, autograd._saved_tensors_hooks_enable = disable, enable

    def _pack(self, tensor: Any) -> Any:
        try:
            with aside():
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
            with aside():
                changed = fingerprint.changed(tensor)
        except Exception:  # noqa: BLE001
            changed = None
        if changed and len(self.violations) < _MAX_VIOLATIONS:
            node = _current_node_name()
            if not any(fragment in node for fragment in _MUTATES_SAVED_INTERNALLY):
                self.violations.append(InplaceViolation(grad_fn=node, detail=changed))
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

