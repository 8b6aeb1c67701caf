"""Graph cases for tests, captured in-process with a Dynamo backend that only records (no Inductor)."""

from __future__ import annotations

import pytest
import torch

from minimizer.graph.capture import case_from_graph_module, input_specs
from minimizer.graph.case import CompileCall, GraphCase


def capture_case(fn, *args, backend: str = "eager", prelude: str = "", check: str = "allclose") -> GraphCase:
    """The single Dynamo graph of ``fn(*args)`` as a GraphCase whose emitted script compiles with ``backend``."""

    graphs = []

    def record(gm, example_inputs):
        graphs.append((gm, input_specs(gm, example_inputs)))
        return gm.forward

    torch._dynamo.reset()
    torch.compile(fn, backend=record, fullgraph=True)(*args)
    assert len(graphs) == 1
    gm, specs = graphs[0]
    case = case_from_graph_module(gm, specs, CompileCall(backend=backend), prelude=prelude, check=check)
    assert case is not None
    return case


def real_inputs(case: GraphCase, seed: int = 0) -> list:
    """Random real tensors for the case's inputs, in placeholder order."""

    generator = torch.Generator().manual_seed(seed)
    values = []
    for spec in case.inputs:
        if not spec.is_tensor:
            values.append(spec.value)
        elif spec.values is not None:
            values.append(torch.tensor(spec.values, dtype=spec.dtype).reshape(spec.shape))
        elif spec.dtype.is_floating_point:
            values.append(torch.randn(spec.shape, generator=generator, dtype=spec.dtype))
        else:
            low, high = spec.int_range or (0, 1)
            values.append(torch.randint(low, high + 1, spec.shape, generator=generator, dtype=spec.dtype))
    return values


def call_names(case: GraphCase) -> list[str]:
    names = []
    for node in case.gm.graph.nodes:
        if node.op == "call_method":
            names.append(str(node.target))
        elif node.op == "call_function":
            names.append(getattr(node.target, "__name__", str(node.target)))
    return names


class Block(torch.nn.Module):
    """A tiny layer mix: linear, layer_norm with a written-in shape, silu, a buffer, view/transpose."""

    def __init__(self):
        super().__init__()
        self.linear = torch.nn.Linear(8, 12)
        self.norm = torch.nn.LayerNorm(12)
        self.register_buffer("offset", torch.ones(12))

    def forward(self, x):
        y = torch.nn.functional.silu(self.norm(self.linear(x))) + self.offset
        z = y.view(4, -1).transpose(0, 1) * 2.0
        return torch.relu(z) + x.sum()


@pytest.fixture
def block_case() -> GraphCase:
    torch.manual_seed(0)
    return capture_case(Block(), torch.randn(2, 3, 8))
