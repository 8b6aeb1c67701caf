"""Graph reduction passes: each is a pure function ``GraphCase -> Iterator[GraphCase]`` that runs nothing.

Every proposal is built by ``edit_case`` (a copied graph, edited through the Graph API, cleaned of dead code and
unused inputs, re-validated by fake-tensor shape propagation), so an invalid proposal never reaches the oracle.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Iterator

import torch
import torch.fx as fx

from minimizer.graph.case import (
    INPUT_SPEC,
    GraphCase,
    InputSpec,
    case_with_outputs,
    edit_case,
    input_spec_for_value,
    replace_spec,
    same_kind_of_tensor,
    tensor_outputs,
    value_of,
)
from minimizer.reduce.scheduler import Pass

_CALLS = ("call_function", "call_method", "call_module")


# -- truncation ------------------------------------------------------------------------------------------


def truncate_to_intermediate(case: GraphCase) -> Iterator[GraphCase]:
    """Make one intermediate tensor the graph's only output; everything it does not depend on goes.

    Along the graph, whether the bug survives a cut is mostly monotone (a cut after the failing operator keeps
    it, one before loses it), so the cuts are asked as a binary search for the earliest that keeps the bug
    (``_CutSearch``): a few questions on a graph of hundreds of operators, where trying every cut cost a call
    per operator. The cuts it skipped are ``truncate_to_any_intermediate``'s.
    """

    return _CutSearch(case, sweep=False)


def truncate_to_any_intermediate(case: GraphCase) -> Iterator[GraphCase]:
    """On a small graph, the cuts the binary search skipped, for the bugs that are not monotone (a wrong gradient
    shown by one branch only). It comes after the removal of node chunks: a bug at the graph's output (every cut
    loses it) costs a question per cut, and the removals leave few."""

    return _CutSearch(case, sweep=True)


# Graphs with at most this many cuts have every cut tried by ``truncate_to_any_intermediate``.
_EVERY_CUT_UP_TO = 32


class _CutSearch(Iterator[GraphCase]):
    """The truncations of ``case`` as a binary search (``sweep``: the cuts it skips, on a small graph). A pass's
    stream is asked for its next proposal only when the one before was turned down (the reducer starts a new
    stream on a step taken; a speculating tester asks ahead as if it was turned down), so asking again moves the
    search past the cut just proposed.

    Resumable like `minimizer.source.passes.candidates.CandidateStream`: ``skip(n)`` after a step numbers the new
    search's proposals from ``n`` on (the reducer resumes a pass at the index of its step taken), ``position``
    is the last one's number.
    """

    def __init__(self, case: GraphCase, *, sweep: bool) -> None:
        self._case = case
        self._nodes = [n for n in case.gm.graph.nodes if n.op in _CALLS and isinstance(value_of(n), torch.Tensor)]
        self._current = {n.name for n in tensor_outputs(case)}
        self._first = 0
        self._asked = 0
        self.position = -1
        self._cuts = self._sweep() if sweep else self._search()

    def skip(self, count: int) -> None:
        self._first = count

    def __next__(self) -> GraphCase:
        candidate = next(self._cuts)
        self.position = self._first + self._asked
        self._asked += 1
        return candidate

    def _search(self) -> Iterator[GraphCase]:
        for _, cut in self._searched():
            if cut is not None:
                yield cut

    def _searched(self) -> Iterator[tuple[int, GraphCase | None]]:
        low, high = 0, len(self._nodes) - 1  # the last cut is taken to keep the bug: it is (nearly) the graph
        while low < high:
            middle = (low + high) // 2
            if {self._nodes[middle].name} == self._current:
                high = middle  # the graph as it is: it keeps the bug
                yield middle, None
                continue
            yield middle, self._cut(middle)
            low = middle + 1

    def _sweep(self) -> Iterator[GraphCase]:
        if len(self._nodes) > _EVERY_CUT_UP_TO:
            return
        tried = {index for index, _ in self._searched()}
        for index in _bisection_order(len(self._nodes)):
            cut = None if index in tried else self._cut(index)
            if cut is not None:
                yield cut

    def _cut(self, index: int) -> GraphCase | None:
        name = self._nodes[index].name
        if {name} == self._current:
            return None
        return case_with_outputs(self._case, [name])


def drop_outputs(case: GraphCase) -> Iterator[GraphCase]:
    """Remove one output of a graph with several."""

    outputs = [n.name for n in tensor_outputs(case)]
    if len(outputs) < 2:
        return
    for name in outputs:
        kept = [o for o in outputs if o != name]
        found = case_with_outputs(case, kept)
        if found is not None:
            yield found


def _bisection_order(n: int) -> list[int]:
    """0..n-1 as midpoints of ever finer halvings: n//2, n//4, 3n//4, ... then whatever is left, in order."""

    order: list[int] = []
    seen: set[int] = set()
    parts = 2
    while parts <= 2 * n:
        for k in range(1, parts, 2):
            index = k * n // parts
            if index < n and index not in seen:
                seen.add(index)
                order.append(index)
        parts *= 2
    order.extend(i for i in range(n) if i not in seen)
    return order


# -- node removal ----------------------------------------------------------------------------------------


def remove_node_chunks(case: GraphCase) -> Iterator[GraphCase]:
    """ddmin over operators: remove chunks of n/2, n/4, ... 2 consecutive nodes, later chunks first.

    Each removed node's users read an earlier value of the same shape and dtype instead (its own input where
    one fits), or a new graph input when none does.
    """

    nodes = _removable(case)
    size = len(nodes) // 2
    while size >= 2:
        for start in reversed(range(0, len(nodes), size)):
            chunk = [n.name for n in nodes[start : start + size]]
            found = edit_case(case, lambda graph, chunk=chunk: _remove(graph, chunk, allow_bypass=True))
            if found is not None:
                yield found
        size //= 2


def remove_single_nodes(case: GraphCase) -> Iterator[GraphCase]:
    """Remove one operator at a time, last first: bypass it with an earlier value, else make it an input."""

    for node in reversed(_removable(case)):
        bypassed = edit_case(case, lambda graph, name=node.name: _remove(graph, [name], allow_bypass=True))
        if bypassed is not None:
            yield bypassed
        as_input = edit_case(case, lambda graph, name=node.name: _remove(graph, [name], allow_bypass=False))
        if as_input is not None:
            yield as_input


def _removable(case: GraphCase) -> list[fx.Node]:
    """Operators whose value is a tensor (replaceable), or that nothing reads (in-place ops, setitem)."""

    return [
        n
        for n in case.gm.graph.nodes
        if n.op in _CALLS and (isinstance(value_of(n), torch.Tensor) or not n.users)
    ]


def _remove(graph: fx.Graph, names: list[str], *, allow_bypass: bool) -> bool:
    chunk = set(names)
    order = list(graph.nodes)
    position = {n: i for i, n in enumerate(order)}
    replacement: dict[fx.Node, fx.Node] = {}
    doomed = [n for n in order if n.name in chunk]
    for node in doomed:
        if node.users:
            value = value_of(node)
            if not isinstance(value, torch.Tensor):
                return False
            stand_in = _earlier_equivalent(node, value, order, position, chunk, replacement) if allow_bypass else None
            if stand_in is None:
                stand_in = _new_input(graph, node, value)
            node.replace_all_uses_with(stand_in)
            replacement[node] = stand_in
    for node in reversed(doomed):
        graph.erase_node(node)
    return True


def _earlier_equivalent(
    node: fx.Node,
    value: torch.Tensor,
    order: list[fx.Node],
    position: dict[fx.Node, int],
    removed: set[str],
    replacement: dict[fx.Node, fx.Node],
) -> fx.Node | None:
    """The node's own inputs first (a bypass), then earlier values, nearest first."""

    candidates = [replacement.get(a, a) for a in node.all_input_nodes]
    candidates += [order[i] for i in range(position[node] - 1, -1, -1)]
    for candidate in candidates:
        if candidate.name in removed or candidate.op == "output":
            continue
        if same_kind_of_tensor(value, value_of(candidate)):
            return candidate
    return None


def _new_input(graph: fx.Graph, node: fx.Node, value: torch.Tensor) -> fx.Node:
    first_op = next(n for n in graph.nodes if n.op != "placeholder")
    with graph.inserting_before(first_op):
        # A plain name: the value's old name (``linear_3``) would suggest an operator that is no longer there.
        placeholder = graph.placeholder("x")
    placeholder.meta[INPUT_SPEC] = input_spec_for_value(placeholder.name, value)
    placeholder.meta["val"] = value
    return placeholder


# -- shapes ----------------------------------------------------------------------------------------------

# Calls whose bare integer arguments are sizes (not dims), so they shrink with the inputs' sizes.
_SIZE_TAKING = {
    "view", "reshape", "expand", "broadcast_to", "repeat", "new_zeros", "new_ones", "new_empty", "new_full",
    "zeros", "ones", "empty", "full", "randn", "rand", "unflatten", "tile",
}  # fmt: skip


def shrink_dimensions(case: GraphCase) -> Iterator[GraphCase]:
    """Make tensors smaller, keeping linked sizes linked.

    A size is shrunk jointly wherever it occurs: in every input's shape and in sizes written into the graph
    (``view`` / ``reshape`` arguments, tuples such as ``layer_norm``'s normalized shape). Proposals: halve
    every even size at once; then per size (largest first) set it to 1, then halve it; then set single
    dimensions of single inputs to 1. Shape propagation drops the proposals whose sizes no longer fit.
    """

    sizes = sorted({d for spec in case.inputs if spec.is_tensor for d in spec.shape if d > 1}, reverse=True)
    if any(d % 2 == 0 for d in sizes):
        # Sizes written into the graph halve too even when no input has them (view(4, -1) -> view(2, -1)).
        found = _resize(case, lambda d: d // 2 if d >= 2 and d % 2 == 0 else d)
        if found is not None:
            yield found
    for d in sizes:
        for target in (1, d // 2):
            if target >= 1 and target != d and (target != d // 2 or d // 2 > 1):
                found = _resize(case, lambda size, d=d, target=target: target if size == d else size)
                if found is not None:
                    yield found
    for index, spec in enumerate(case.inputs):
        if not spec.is_tensor:
            continue
        for dim, d in enumerate(spec.shape):
            if d > 1:
                shape = spec.shape[:dim] + (1,) + spec.shape[dim + 1 :]
                found = _reshape_one_input(case, index, shape)
                if found is not None:
                    yield found


def _resize(case: GraphCase, mapping: Callable[[int], int]) -> GraphCase | None:
    def apply(graph: fx.Graph) -> None:
        for node in graph.nodes:
            if node.op == "placeholder":
                spec = node.meta[INPUT_SPEC]
                if spec.is_tensor and any(mapping(d) != d for d in spec.shape):
                    node.meta[INPUT_SPEC] = spec.reshaped(tuple(mapping(d) for d in spec.shape))
            elif node.op in _CALLS:
                sizes_as_args = _call_name(node) in _SIZE_TAKING
                node.args = tuple(_map_sizes(a, mapping, sizes_as_args) for a in node.args)
                node.kwargs = {k: _map_sizes(v, mapping, k in ("size", "shape")) for k, v in node.kwargs.items()}

    return edit_case(case, apply)


def _map_sizes(arg: Any, mapping: Callable[[int], int], bare_int_is_size: bool) -> Any:
    if type(arg) is int:
        return mapping(arg) if bare_int_is_size and arg > 0 else arg
    if isinstance(arg, (tuple, list)) and arg and all(type(a) is int for a in arg):
        return type(arg)(mapping(a) if a > 0 else a for a in arg)
    if isinstance(arg, (tuple, list)):
        return type(arg)(_map_sizes(a, mapping, bare_int_is_size) for a in arg)
    return arg


def _call_name(node: fx.Node) -> str:
    if node.op == "call_method":
        return str(node.target)
    return getattr(node.target, "__name__", "")


def _reshape_one_input(case: GraphCase, index: int, shape: tuple[int, ...]) -> GraphCase | None:
    target = case.placeholders[index].name

    def apply(graph: fx.Graph) -> None:
        node = next(n for n in graph.nodes if n.name == target)
        node.meta[INPUT_SPEC] = node.meta[INPUT_SPEC].reshaped(shape)

    return edit_case(case, apply)


# -- inputs ----------------------------------------------------------------------------------------------

_SIMPLER_DTYPE = {torch.float64: torch.float32, torch.float16: torch.float32, torch.bfloat16: torch.float32}


def simplify_dtypes(case: GraphCase) -> Iterator[GraphCase]:
    """float64 / float16 / bfloat16 inputs become float32: all at once, then one input at a time."""

    def simpler(spec: InputSpec) -> InputSpec | None:
        dtype = _SIMPLER_DTYPE.get(spec.dtype) if spec.is_tensor else None
        return None if dtype is None else dataclasses.replace(spec, dtype=dtype, values=None)

    yield from _all_then_each(case, simpler)


def parameters_to_inputs(case: GraphCase) -> Iterator[GraphCase]:
    """Parameters and buffers become plain inputs of ``forward``: all at once, then one at a time."""

    def plain(spec: InputSpec) -> InputSpec | None:
        return dataclasses.replace(spec, kind="input") if spec.kind in ("parameter", "buffer") else None

    yield from _all_then_each(case, plain)


def drop_requires_grad(case: GraphCase) -> Iterator[GraphCase]:
    """Inputs stop requiring grad: all at once, then one at a time."""

    def plain(spec: InputSpec) -> InputSpec | None:
        return dataclasses.replace(spec, requires_grad=False) if spec.requires_grad else None

    yield from _all_then_each(case, plain)


def merge_inputs(case: GraphCase) -> Iterator[GraphCase]:
    """An input reads an earlier input of the same kind instead: one input where the removals left two alike.

    Removing an operator makes its value an input (``x_1 + sigmoid(x)``); once the shapes have shrunk the two
    are alike, and the program needs only one (``x + sigmoid(x)``). Latest input first.
    """

    tensors = [p for p in case.placeholders if p.meta[INPUT_SPEC].is_tensor]
    for later_index in range(len(tensors) - 1, 0, -1):
        later = tensors[later_index]
        for earlier in tensors[:later_index]:
            if _interchangeable(earlier.meta[INPUT_SPEC], later.meta[INPUT_SPEC]):
                found = edit_case(case, lambda graph, a=earlier.name, b=later.name: _read_instead(graph, b, a))
                if found is not None:
                    yield found
                break


def _interchangeable(a: InputSpec, b: InputSpec) -> bool:
    return (a.kind, a.shape, a.dtype, a.device, a.requires_grad, a.stride) == (
        b.kind, b.shape, b.dtype, b.device, b.requires_grad, b.stride
    )


def _read_instead(graph: fx.Graph, name: str, stand_in: str) -> None:
    nodes = {n.name: n for n in graph.nodes if n.op == "placeholder"}
    nodes[name].replace_all_uses_with(nodes[stand_in])


def _all_then_each(case: GraphCase, change: Callable[[InputSpec], InputSpec | None]) -> Iterator[GraphCase]:
    targets = [i for i, spec in enumerate(case.inputs) if change(spec) is not None]
    if len(targets) > 1:
        found = replace_spec(case, change)
        if found is not None:
            yield found
    for index in targets:
        name = case.placeholders[index].name
        found = edit_case(case, lambda graph, name=name: _change_one(graph, name, change))
        if found is not None:
            yield found


def _change_one(graph: fx.Graph, name: str, change: Callable[[InputSpec], InputSpec | None]) -> None:
    node = next(n for n in graph.nodes if n.name == name)
    node.meta[INPUT_SPEC] = change(node.meta[INPUT_SPEC]) or node.meta[INPUT_SPEC]


GRAPH_PASSES: list[Callable[[GraphCase], Iterator[GraphCase]]] = [
    drop_outputs,
    truncate_to_intermediate,
    remove_node_chunks,
    truncate_to_any_intermediate,
    shrink_dimensions,
    simplify_dtypes,
    parameters_to_inputs,
    drop_requires_grad,
    merge_inputs,
    remove_single_nodes,
]


def graph_passes() -> list[Pass[GraphCase]]:
    """Fresh pass objects in first-round order: coarse cuts first, single nodes last."""

    return [Pass.of(fn) for fn in GRAPH_PASSES]
