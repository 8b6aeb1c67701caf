"""What a run's compiled calls depended on, as one hash: equal hashes, equal recorded calls.

An oracle that reads nothing but the recorded calls (``Oracle.reads_only_calls``) gives the same verdict for
two runs whose calls were the same: the same graphs compiled by the same backend under the same settings, called
in the same order on the same inputs in the same global state. Two candidates that differ only in code the
compiler never sees (a print, a line that sets up something unused, a comment) then share a verdict.

The hash takes, in order:
- per graph dynamo hands to a backend: its structure (ops, their targets and arguments, with names stripped),
  the metadata and values of its example inputs (parameters included), and the backend and its options;
- per compiled call: the metadata and values of its inputs and of the module's parameters and buffers, and
  the state that changes what a call computes (grad mode, autocast, default dtype, RNG, compiler configs).

A run gets no hash (``None``) when something its calls depend on is not in it: a graph break (eager code runs
inside the call), more than one compiled call (eager code between two calls may turn the first one's compiled
output into the second one's input), a backend or an op defined in the script itself (its code can change
while the graph does not), a user Triton kernel, or an error while hashing. Nor under the ``eager`` backend:
there Dynamo's capture is what is tested, and the eager side the oracles compare with runs the script's code,
which a wrong capture does not hold (two candidates with one graph can differ there).

Like Inductor's own FX-graph cache, the hash trusts that the compiler's behaviour is a function of the graph,
the inputs and the compiler's configs: a script that patches the compiler some other way (replacing a lowering
by assignment) is not seen. ``--no-share-verdicts`` turns sharing off.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any, Callable

from oracles.tensor_bytes import tensor_bytes

# Objects whose code lives in the script under reduction: they can change without the graph changing.
_SCRIPT_MODULES = ("__main__", "__mp_main__")
# Operator namespaces torch itself defines; an op in another one may be implemented by the script.
_TORCH_OP_NAMESPACES = frozenset({"aten", "prims", "prim", "quantized", "_quantized", "higher_order", "inductor"})


class Unhashable(Exception):
    """Something a call depends on cannot be put into the hash."""


class CallFingerprint:
    """Accumulates a run's graphs and calls; ``key()`` is the hash, or ``None`` with ``why_not`` set."""

    def __init__(self) -> None:
        self._original_compiler: Callable[..., Any] | None = None
        self._hash = hashlib.sha256()
        self.graphs = 0
        self.calls = 0
        self.why_not: str | None = None
        self.tracing_seconds = 0.0  # what the traced run that fed it took (set by whoever ran it)

    # -- what goes in -----------------------------------------------------------------------------------

    def add_compile(self, kwargs: dict[str, Any]) -> None:
        """A ``torch.compile`` call: its backend and options."""

        self._guarded(lambda: self._update("compile", _describe_compile_options(kwargs)))

    def add_call(self, inputs: Any, params: list[tuple[str, Any]]) -> None:
        """A compiled call about to run: its inputs, the parameters and buffers it uses, the global state."""

        self.calls += 1
        self._guarded(lambda: self._update("call", _describe_values(inputs), _describe_params(params), _global_state()))

    def add_graph(self, gm: Any, example_inputs: list[Any]) -> None:
        """A graph dynamo hands to the backend, with the real example inputs it was traced for."""

        self.graphs += 1
        self._guarded(lambda: self._update("graph", _describe_graph(gm), _describe_values(example_inputs)))

    def key(self) -> str | None:
        """The hash of everything added, or ``None`` when the run cannot be shared (see ``why_not``)."""

        self._check_graph_breaks()
        if self.calls > 1:
            # The fingerprint sees a later call's inputs as the traced run computed them, from eager outputs;
            # the real run computes them from compiled outputs, through eager code the hash does not cover.
            self.why_not = self.why_not or "more than one compiled call (later inputs may come from compiled outputs)"
        if self.why_not is not None or not self.calls:
            return None
        return self._hash.hexdigest()

    # -- seeing the graphs --------------------------------------------------------------------------------

    def install(self) -> None:
        """Watch every graph dynamo compiles (wraps ``OutputGraph.call_user_compiler``)."""

        from torch._dynamo.output_graph import OutputGraph

        original = OutputGraph.call_user_compiler
        fingerprint = self

        def call_user_compiler(graph_self: Any, gm: Any, example_inputs: Any) -> Any:
            fingerprint.add_graph(gm, example_inputs)
            return original(graph_self, gm, example_inputs)

        self._original_compiler = original
        OutputGraph.call_user_compiler = call_user_compiler  # type: ignore[method-assign]

    def uninstall(self) -> None:
        if self._original_compiler is not None:
            from torch._dynamo.output_graph import OutputGraph

            OutputGraph.call_user_compiler = self._original_compiler  # type: ignore[method-assign]
            self._original_compiler = None

    # -- helpers ------------------------------------------------------------------------------------------

    def _check_graph_breaks(self) -> None:
        try:
            from torch._dynamo.utils import counters

            if counters["graph_break"]:
                self.why_not = self.why_not or "a graph break runs eager code inside a compiled call"
        except Exception:  # noqa: BLE001
            self.why_not = self.why_not or "graph breaks could not be counted"

    def _guarded(self, add: Callable[[], None]) -> None:
        if self.why_not is not None:
            return
        try:
            add()
        except Unhashable as exc:
            self.why_not = str(exc)
        except Exception as exc:  # noqa: BLE001 - a run we cannot hash is simply not shared
            self.why_not = f"hashing failed: {type(exc).__name__}: {exc}"

    def _update(self, *parts: str) -> None:
        for part in parts:
            self._hash.update(part.encode())
            self._hash.update(b"\x00")


def _describe_graph(gm: Any) -> str:
    """The graph's structure without names: ``op target args kwargs`` per node, nodes referred to by index."""

    import torch

    index: dict[Any, int] = {}
    lines = []
    for node in gm.graph.nodes:
        index[node] = len(index)
        target = node.target
        if node.op in ("call_module", "get_attr"):
            owned = _attribute(gm, target)
            if isinstance(owned, torch.fx.GraphModule):
                target = "graph:" + _describe_graph(owned)
            elif isinstance(owned, torch.Tensor):
                target = "tensor:" + _describe_values(owned)
            elif type(owned).__module__ in _SCRIPT_MODULES:
                raise Unhashable(f"the graph calls {type(owned).__qualname__}, a module class defined in the script")
            else:
                target = f"{type(owned).__module__}.{type(owned).__qualname__}"
        elif node.op == "call_function":
            target = _describe_callable(target)
        elif node.op == "call_method":
            target = str(target)
        else:  # placeholder and output: the name is dynamo's, from the script's variable names
            target = node.op

        def describe(value: Any) -> str:
            if isinstance(value, torch.fx.Node):
                return f"%{index[value]}"
            return _describe_constant(value)

        args = torch.fx.node.map_aggregate(node.args, describe)
        kwargs = torch.fx.node.map_aggregate(dict(sorted(node.kwargs.items())), describe)
        lines.append(f"{node.op} {target} {args} {kwargs}")
    return "\n".join(lines)


def _attribute(root: Any, dotted: str) -> Any:
    value = root
    for name in str(dotted).split("."):
        value = getattr(value, name)
    return value


def _describe_callable(target: Any) -> str:
    import torch

    if isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
        if target.namespace not in _TORCH_OP_NAMESPACES:
            # Its implementation may be in the script (torch.library), where it can change under the same name.
            raise Unhashable(f"the graph calls torch.ops.{target.namespace}, an op registered outside torch")
        return str(target)
    module = getattr(target, "__module__", None) or ""
    if module in _SCRIPT_MODULES:
        raise Unhashable(f"the graph calls {getattr(target, '__qualname__', target)!r}, defined in the script")
    name = str(target)
    if "triton_kernel_wrapper" in name:
        raise Unhashable("the graph calls a user Triton kernel (its source is not in the graph)")
    qualname = getattr(target, "__qualname__", None) or getattr(target, "__name__", None)
    return f"{module}.{qualname}" if qualname else name.split(" at 0x")[0]


def _describe_constant(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        return "tensor:" + _describe_values(value)
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    if callable(value) and not isinstance(value, type):
        return _describe_callable(value)
    return repr(value).split(" at 0x")[0]


def _describe_values(tree: Any) -> str:
    """Metadata and contents of every tensor in ``tree``; other leaves by ``repr``."""

    import torch
    from torch.utils._pytree import tree_flatten

    parts = []
    for leaf in tree_flatten(tree)[0]:
        if isinstance(leaf, torch.Tensor):
            parts.append(_describe_tensor(leaf))
        elif isinstance(leaf, torch.nn.Module):
            parts.append(f"module:{type(leaf).__qualname__}:" + _describe_params(_module_state(leaf)))
        else:
            parts.append(_describe_constant(leaf))
    return "[" + ", ".join(parts) + "]"


def _describe_tensor(tensor: Any) -> str:
    import torch

    meta = (
        f"{tuple(tensor.shape)} {tuple(tensor.stride()) if tensor.layout == torch.strided else tensor.layout} "
        f"{tensor.dtype} {tensor.device} rg={tensor.requires_grad}"
    )
    if tensor.is_meta or not tensor.layout == torch.strided:
        raise Unhashable(f"a {tensor.layout} or meta tensor input cannot be hashed by value")
    with torch.no_grad():
        data = tensor.detach()
        if data.is_complex():
            data = torch.view_as_real(data)
        contents = hashlib.sha256(tensor_bytes(data)).hexdigest()[:24] if data.numel() else ""
    return f"{meta} {contents}"


def _module_state(module: Any) -> list[tuple[str, Any]]:
    return list(module.named_parameters()) + [(name, b) for name, b in module.named_buffers() if b is not None]


def _describe_params(params: list[tuple[str, Any]]) -> str:
    return "{" + ", ".join(f"{name}={_describe_tensor(p)}" for name, p in params) + "}"


def _describe_compile_options(kwargs: dict[str, Any]) -> str:
    parts = []
    for name, value in sorted(kwargs.items()):
        if name == "backend" and isinstance(value, str):
            # A name stands for whatever is registered under it now: an import that registers it (a module
            # beside the script) may be what a candidate removed, and then the call fails where the other ran.
            from torch._dynamo.backends.registry import lookup_backend

            try:
                value = lookup_backend(value)
            except Exception:  # noqa: BLE001 - InvalidBackend: the compile will fail; nothing to share
                raise Unhashable(f"no backend is registered as {kwargs['backend']!r}") from None
        if name == "backend" and value is _eager_backend():
            # Dynamo's capture is all this backend does, so a bug it shows is one the graph hides: the eager side
            # runs the script's own code (an autograd.Function's backward Dynamo dropped, say), which no graph holds.
            raise Unhashable("backend 'eager': the graph is the capture under test, not a stand-in for the code")
        if name == "backend" and callable(value):
            if getattr(value, "__module__", None) in _SCRIPT_MODULES:
                raise Unhashable("the backend is defined in the script")
            value = _describe_callable(value)
        parts.append(f"{name}={value!r}")
    return ", ".join(parts)


def _eager_backend() -> Any:
    """What Dynamo registers as ``eager``: the backend, named or passed, under which its capture is all that runs."""

    from torch._dynamo.backends.registry import lookup_backend

    return lookup_backend("eager")


def _global_state() -> str:
    import torch

    state = [
        f"grad={torch.is_grad_enabled()}",
        f"inference={torch.is_inference_mode_enabled()}",
        f"dtype={torch.get_default_dtype()}",
        f"autocast_cpu={torch.is_autocast_enabled('cpu')}:{torch.get_autocast_dtype('cpu')}",
        f"deterministic={torch.are_deterministic_algorithms_enabled()}",
        "rng=" + hashlib.sha256(tensor_bytes(torch.random.get_rng_state())).hexdigest()[:24],
    ]
    if torch.cuda.is_initialized():
        state.append(f"autocast_cuda={torch.is_autocast_enabled('cuda')}:{torch.get_autocast_dtype('cuda')}")
        state += [hashlib.sha256(tensor_bytes(s)).hexdigest()[:24] for s in torch.cuda.get_rng_state_all()]
    state.append("configs=" + _configs())
    return " ".join(state)


def _configs() -> str:
    """The compiler settings a script can change (``torch._inductor.config.x = ...`` and the like)."""

    import torch._dynamo.config
    import torch._functorch.config
    import torch._inductor.config

    digest = hashlib.sha256()
    for config in (torch._dynamo.config, torch._inductor.config, torch._functorch.config):
        for name, value in sorted(config.get_config_copy().items()):
            described = _describe_callable(value) if callable(value) and not isinstance(value, type) else repr(value)
            digest.update(f"{name}={described.split(' at 0x')[0]}\n".encode())
    return digest.hexdigest()[:24]
