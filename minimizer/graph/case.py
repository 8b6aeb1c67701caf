"""One graph candidate: an FX graph, what its inputs look like, and how the script compiled it.

Each placeholder carries its ``InputSpec`` in ``node.meta["input_spec"]``, so the graph is the single source of
truth: a pass that drops or adds a placeholder changes the inputs with it. Every node's ``meta["val"]`` holds a
fake tensor (or a plain value) from the last shape propagation; passes read shapes and dtypes from it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import torch
import torch.fx as fx
from torch.fx._lazy_graph_module import _LazyGraphModule

INPUT_SPEC = "input_spec"

FLOAT_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


@dataclass(frozen=True)
class InputSpec:
    """What a placeholder receives.

    ``kind`` is ``parameter``, ``buffer`` or ``input`` for tensors, ``int`` for a plain integer (``value``).
    ``values`` holds the exact contents (a flat list) when they matter and are small, as for integer index
    tensors; otherwise the emitted script draws random values (``int_range`` bounds random integers, and
    ``positive`` floats drawn where every recorded value was above zero: a variance, a scale).
    """

    name: str
    kind: str = "input"
    shape: tuple[int, ...] = ()
    dtype: torch.dtype = torch.float32
    device: str = "cpu"
    requires_grad: bool = False
    stride: tuple[int, ...] | None = None
    value: int | None = None
    values: tuple[Any, ...] | None = None
    int_range: tuple[int, int] | None = None
    positive: bool = False
    # A small floating input's values as the call got them: drawn at random unless a bug needs them (a matrix
    # of ones whose condition number one side gets wrong), see ``with_recorded_values``.
    recorded: tuple[float, ...] | None = None
    # The spread of a floating input's values where it was well under one (a weight initialised at std 0.02):
    # drawn as ``torch.randn(...) * scale``, since unit-variance weights blow a deep graph's activations up
    # (and its gradients to NaN on one side only).
    scale: float | None = None

    @property
    def is_tensor(self) -> bool:
        return self.kind != "int"

    @property
    def nbytes(self) -> int:
        if not self.is_tensor:
            return 0
        numel = 1
        for d in self.shape:
            numel *= d
        return numel * torch.empty((), dtype=self.dtype).element_size()

    def reshaped(self, shape: tuple[int, ...]) -> InputSpec:
        """This spec with another shape; exact values and strides no longer fit, so they are dropped."""

        return dataclasses.replace(self, shape=tuple(shape), stride=None, values=None)


@dataclass(frozen=True)
class CompileCall:
    """How the script called ``torch.compile``: ``backend`` is a registered name or ``module:qualname``."""

    backend: str = "inductor"
    mode: str | None = None
    fullgraph: bool = False
    dynamic: bool | None = None
    options: dict[str, Any] | None = None


@dataclass(frozen=True)
class GraphCase:
    """A candidate for the graph reducer. Treat as immutable: passes build new cases with ``edit_case``.

    ``prelude`` is the original script's import and compiler-configuration code, copied verbatim into the
    emitted script; ``check`` names the plain-code check at its end (see ``minimizer.graph.emit``).
    """

    gm: fx.GraphModule
    compile: CompileCall = field(default_factory=CompileCall)
    prelude: str = ""
    check: str = "allclose"
    grad_enabled: bool = True  # grad mode the graph was compiled under (see CapturedGraph)
    autocast: tuple[str, ...] = ()  # ``cpu:bfloat16`` where autocast was on when it was compiled

    @property
    def placeholders(self) -> list[fx.Node]:
        return [n for n in self.gm.graph.nodes if n.op == "placeholder"]

    @property
    def inputs(self) -> list[InputSpec]:
        return [n.meta[INPUT_SPEC] for n in self.placeholders]

    @property
    def output_node(self) -> fx.Node:
        return next(n for n in reversed(self.gm.graph.nodes) if n.op == "output")


def operator_count(case: GraphCase) -> int:
    """Calls in the graph (functions, methods, modules), the measure a person reads as 'how many ops'."""

    return sum(1 for n in case.gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))


def case_size(case: GraphCase) -> int:
    """What the reducer minimizes, in priority order: operators, then inputs, then bytes of input data."""

    inputs = case.inputs
    data = min(sum(spec.nbytes for spec in inputs), 10**9 - 1)
    return operator_count(case) * 10**12 + len(inputs) * 10**9 + data


def copy_graph_module(gm: fx.GraphModule) -> fx.GraphModule:
    """A new GraphModule with a copied graph (node meta copied shallowly, attributes shared with ``gm``).

    Lazy: its Python code is generated only when it is called. A reduction builds thousands of proposals that
    are emitted (from the nodes) or dropped as seen before, never called; generating their code was two thirds
    of the cost of building one.
    """

    graph = fx.Graph()
    value_map: dict[fx.Node, fx.Node] = {}
    out = graph.graph_copy(gm.graph, value_map)
    graph.output(out)
    old_output = next(n for n in reversed(gm.graph.nodes) if n.op == "output")
    new_output = next(n for n in reversed(graph.nodes) if n.op == "output")
    new_output.meta = dict(old_output.meta)
    return _LazyGraphModule(gm, graph)


def edit_case(case: GraphCase, change: Callable[[fx.Graph], bool | None]) -> GraphCase | None:
    """Apply ``change`` to a copy of the case's graph, clean up, and re-validate by shape propagation.

    ``change`` edits the graph in place through the Graph API; returning ``False`` abandons the edit. Returns
    ``None`` when the edit is abandoned or leaves an invalid graph (lint or propagation fails, no tensor
    output left).
    """

    gm = copy_graph_module(case.gm)
    try:
        if change(gm.graph) is False:
            return None
        remove_unused(gm.graph)
        gm.graph.lint()
        gm.recompile()
    except Exception:  # a proposal that the graph rejects is simply not a candidate
        return None
    new = dataclasses.replace(case, gm=gm)
    if not propagate_shapes(new) or not tensor_outputs(new):
        return None
    return new


def case_with_outputs(case: GraphCase, names: list[str]) -> GraphCase | None:
    """``case`` returning the nodes ``names`` and computing only what they read (and what writes in place, which
    dead-code elimination keeps too). Every node kept computes what it did and keeps its copied shapes: nothing
    is propagated again (a run of the whole graph per proposal, minutes on a library model's graph of hundreds
    of nodes), and only the nodes kept are copied (a cut of a long graph keeps its first part)."""

    nodes = list(case.gm.graph.nodes)
    by_name = {n.name: n for n in nodes}
    outputs = [by_name[name] for name in names]
    needed: set[fx.Node] = set()
    stack = outputs + [n for n in nodes if n.op not in ("placeholder", "output") and n.is_impure()]
    while stack:
        node = stack.pop()
        if node not in needed:
            needed.add(node)
            stack.extend(node.all_input_nodes)
    graph = fx.Graph()
    copied: dict[fx.Node, fx.Node] = {}
    for node in nodes:
        if node in needed:
            copied[node] = graph.node_copy(node, lambda n: copied[n])
    graph.output(tuple(copied[n] for n in outputs)).meta = dict(case.output_node.meta)
    try:
        graph.lint()
    except Exception:  # a cut the graph rejects is simply not a candidate
        return None
    new = dataclasses.replace(case, gm=_LazyGraphModule(case.gm, graph))
    return new if tensor_outputs(new) else None


def replace_spec(case: GraphCase, change: Callable[[InputSpec], InputSpec | None]) -> GraphCase | None:
    """A copy of ``case`` whose placeholders' specs went through ``change`` (``None`` keeps a spec)."""

    def apply(graph: fx.Graph) -> bool:
        changed = False
        for node in graph.nodes:
            if node.op != "placeholder":
                continue
            new = change(node.meta[INPUT_SPEC])
            if new is not None and new != node.meta[INPUT_SPEC]:
                node.meta[INPUT_SPEC] = new
                changed = True
        return changed

    return edit_case(case, apply)


def with_recorded_values(case: GraphCase) -> GraphCase | None:
    """``case`` with its floating inputs given the values the call was made with instead of random ones;
    ``None`` where none were recorded."""

    return replace_spec(case, lambda spec: None if spec.recorded is None else replace(spec, values=spec.recorded))


def remove_unused(graph: fx.Graph) -> None:
    """Dead code, then placeholders nothing reads, then outputs that are not tensors."""

    output = next(n for n in reversed(graph.nodes) if n.op == "output")
    values = output.args[0]
    if isinstance(values, (tuple, list)):
        kept = tuple(v for v in values if isinstance(v, fx.Node) and _is_tensor(v.meta.get("val")))
        if len(kept) != len(values):
            output.args = (kept,)
    graph.eliminate_dead_code()
    for node in list(graph.nodes):
        if node.op == "placeholder" and not node.users:
            graph.erase_node(node)


def tensor_outputs(case: GraphCase) -> list[fx.Node]:
    values = case.output_node.args[0]
    if not isinstance(values, (tuple, list)):
        values = (values,)
    return [v for v in values if isinstance(v, fx.Node) and _is_tensor(v.meta.get("val"))]


def _is_tensor(value: Any) -> bool:
    return isinstance(value, torch.Tensor)


class _Propagator(fx.Interpreter):
    def run_node(self, n: fx.Node) -> Any:
        result = super().run_node(n)
        n.meta["val"] = result
        return result


def fake_inputs(case: GraphCase, mode: Any) -> list[Any]:
    args = []
    for spec in case.inputs:
        if not spec.is_tensor:
            args.append(spec.value)
            continue
        with mode:
            t = torch.empty(spec.shape, dtype=spec.dtype, device=spec.device)
        if spec.requires_grad and (spec.dtype.is_floating_point or spec.dtype.is_complex):
            t.requires_grad_(True)
        args.append(t)
    return args


def propagate_shapes(case: GraphCase) -> bool:
    """Run the graph on fake tensors built from the input specs, storing each node's value in ``meta["val"]``.

    Returns whether the graph ran; a graph that fails here (shapes that don't fit, a dtype an op rejects) is
    not a valid candidate.
    """

    from torch._subclasses.fake_tensor import FakeTensorMode

    # Failing proposals are expected; the fake-tensor logger would print a traceback for each.
    logging.getLogger("torch._subclasses.fake_tensor").setLevel(logging.CRITICAL)
    mode = FakeTensorMode(allow_non_fake_inputs=True)
    for node in case.gm.graph.nodes:
        if node.op == "placeholder" and INPUT_SPEC not in node.meta:
            return False
    # Graphs may toggle grad mode (no_grad regions arrive as _set_grad_enabled calls); restore it afterwards.
    with torch.set_grad_enabled(torch.is_grad_enabled()):
        try:
            args = fake_inputs(case, mode)
            with mode:
                _Propagator(case.gm).run(*args)
        except Exception:
            return False
    return True


def value_of(node: fx.Node) -> Any:
    return node.meta.get("val")


def same_kind_of_tensor(a: Any, b: Any) -> bool:
    """Whether ``b`` can stand in for ``a``: both tensors of one shape, dtype and device."""

    return (
        _is_tensor(a)
        and _is_tensor(b)
        and tuple(a.shape) == tuple(b.shape)
        and a.dtype == b.dtype
        and a.device == b.device
    )


def input_spec_for_value(name: str, value: torch.Tensor) -> InputSpec:
    """A plain-input spec for a tensor that a node computed (when a removed node becomes an input)."""

    return InputSpec(
        name=name,
        kind="input",
        shape=tuple(int(d) for d in value.shape),
        dtype=value.dtype,
        device=str(value.device),
        requires_grad=bool(value.requires_grad),
    )


def is_getitem(node: fx.Node) -> bool:
    return node.op == "call_function" and node.target is operator.getitem


# Exact contents are recorded for integer and boolean tensors up to this size (indices must stay in range).
MAX_RECORDED_VALUES = 4096
# And for floating tensors up to this size, for a bug that needs them (see InputSpec.recorded).
MAX_RECORDED_FLOATS = 64


def tensor_spec(name: str, value: torch.Tensor, kind: str = "input") -> InputSpec:
    """What a repro needs to make a tensor like ``value``: shape, dtype, device, ``requires_grad``, the exact
    values of a small integer tensor, and how its floating values were spread."""

    values = int_range = None
    if not (value.dtype.is_floating_point or value.dtype.is_complex) and value.numel() <= MAX_RECORDED_VALUES:
        flat = value.detach().cpu().reshape(-1)
        values = tuple(flat.tolist())
        if value.dtype != torch.bool and flat.numel():
            int_range = (int(flat.min()), int(flat.max()))
    return InputSpec(
        name=name,
        kind=kind,
        shape=tuple(int(d) for d in value.shape),
        dtype=value.dtype,
        device=str(value.device),
        requires_grad=bool(value.requires_grad),
        stride=tuple(int(s) for s in value.stride()),
        values=values,
        int_range=int_range,
        positive=_all_positive(value),
        recorded=_small_floats(value),
        scale=_small_scale(value),
    )


def _small_floats(value: torch.Tensor) -> tuple[float, ...] | None:
    if not value.dtype.is_floating_point or value.numel() > MAX_RECORDED_FLOATS:
        return None
    return tuple(float(v) for v in value.detach().cpu().reshape(-1).tolist())


def _small_scale(value: torch.Tensor) -> float | None:
    """The standard deviation of a floating tensor's values, to one significant digit, where it is under 0.5
    (``InputSpec.scale``); ``None`` otherwise."""

    if not value.dtype.is_floating_point or value.numel() < 2 or _all_positive(value):
        return None
    with torch.no_grad():
        std = float(value.detach().float().std())
    if not 0.0 < std < 0.5 or not math.isfinite(std):
        return None
    return float(f"{std:.0e}")


def _all_positive(value: torch.Tensor) -> bool:
    """A floating tensor whose every value is above zero (a batch norm's running variance, say): drawn from
    ``torch.rand`` in the repro, since ``torch.randn`` would make a variance negative and the output NaN."""

    if not value.dtype.is_floating_point or not value.numel():
        return False
    with torch.no_grad():
        return bool((value.detach() > 0).all())
