"""Each graph pass on small captured graphs, with fast in-process oracles."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.graph.case import case_size, operator_count, propagate_shapes
from minimizer.graph.emit import emit_script
from minimizer.graph.passes import (
    GRAPH_PASSES,
    drop_outputs,
    graph_passes,
    merge_inputs,
    parameters_to_inputs,
    remove_node_chunks,
    remove_single_nodes,
    shrink_dimensions,
    simplify_dtypes,
    truncate_to_any_intermediate,
    truncate_to_intermediate,
)
from minimizer.reduce.scheduler import Pass, Reducer
from minimizer.reduce.tester import Tester
from tests.graph.conftest import call_names, capture_case, real_inputs


class Quiet:
    def reduction_started(self, size):
        pass

    def pass_started(self, name):
        pass

    def accepted(self, text, size, pass_name):
        pass


def reduce_with(case, interesting):
    """Run the real scheduler and tester with an in-process predicate on the case itself."""

    seen = {}

    def render(candidate):
        text = emit_script(candidate)
        seen[text] = candidate
        return text

    tester = Tester(render, lambda text, cancel: interesting(seen[text]))
    return Reducer(graph_passes(), tester, case_size, Quiet()).reduce(case)


def test_every_candidate_of_every_pass_is_valid_and_no_larger(block_case):
    for propose in GRAPH_PASSES:
        for candidate in propose(block_case):
            assert propagate_shapes(candidate), propose.__name__
            candidate.gm.graph.lint()
            assert case_size(candidate) <= case_size(block_case), propose.__name__
            compile(emit_script(candidate), "<candidate>", "exec")
    # Proposals never change the case they came from.
    assert operator_count(block_case) == len(call_names(block_case))


def test_truncation_makes_an_intermediate_the_only_output(block_case):
    candidates = list(truncate_to_intermediate(block_case))
    assert candidates
    for candidate in candidates:
        outputs = candidate.output_node.args[0]
        assert len(outputs) == 1
        assert operator_count(candidate) < operator_count(block_case)


def _long_chain(x):
    """A chain of 120 operators with one ``sin`` at 85: the cut must fall on or after it."""

    for step in range(120):
        x = torch.sin(x) if step == 85 else x * 1.5 if step % 2 else x + 0.5
    return x


def test_truncation_finds_the_earliest_cut_of_a_long_chain_by_binary_search():
    case = capture_case(_long_chain, torch.randn(3))
    seen, asked = {}, []

    def render(candidate):
        text = emit_script(candidate)
        seen[text] = candidate
        return text

    def keeps_the_sin(text, cancel):
        asked.append(text)
        return "sin" in call_names(seen[text])

    tester = Tester(render, keeps_the_sin)
    best = Reducer([Pass.of(truncate_to_intermediate)], tester, case_size, Quiet()).reduce(case)
    assert call_names(best)[-1] == "sin" and operator_count(best) == 86
    # Trying every cut asked up to 120 questions; the search asks about log2 of the graph's size per step.
    assert len(asked) <= 20, len(asked)


def test_the_sweep_of_a_small_graph_asks_every_cut_the_search_skipped_and_no_other(block_case):
    def outputs(candidates):
        return [tuple(n.name for n in c.output_node.args[0]) for c in candidates]

    searched = outputs(truncate_to_intermediate(block_case))
    swept = outputs(truncate_to_any_intermediate(block_case))
    assert swept and not set(swept) & set(searched)
    assert list(truncate_to_any_intermediate(capture_case(_long_chain, torch.randn(3)))) == []  # too many cuts


def test_truncation_numbers_its_proposals_from_where_the_reducer_resumes():
    search = truncate_to_intermediate(capture_case(_long_chain, torch.randn(3)))
    search.skip(5)
    next(search), next(search)
    assert search.position == 6


def test_reduction_keeps_only_what_the_oracle_needs(block_case):
    best = reduce_with(block_case, lambda case: "silu" in call_names(case))
    assert call_names(best) == ["silu"]
    (spec,) = best.inputs
    assert spec.shape == (1,) or all(d == 1 for d in spec.shape)


def test_nan_oracle_on_real_values():
    def fn(x, w):
        h = torch.relu(x @ w)
        return torch.sqrt(torch.tanh(h) - 2.0) + x.sum(), torch.cos(h)

    case = capture_case(fn, torch.randn(4, 8), torch.randn(8, 8))

    def has_nan(candidate):
        outputs = candidate.gm(*real_inputs(candidate))
        return any(torch.isnan(o).any() for o in outputs)

    best = reduce_with(case, has_nan)
    assert "sqrt" in call_names(best)
    assert operator_count(best) <= 2


def test_node_removal_bypasses_with_an_earlier_value_of_the_same_shape():
    case = capture_case(lambda x: torch.cos(torch.sin(torch.relu(x))), torch.randn(3, 4))
    candidates = list(remove_single_nodes(case))
    bypassed = [c for c in candidates if len(c.inputs) == 1]
    assert {tuple(call_names(c)) for c in bypassed} >= {("sin", "cos"), ("relu", "cos"), ("relu", "sin")}


def test_node_removal_turns_a_value_without_stand_in_into_an_input():
    case = capture_case(lambda x: torch.relu(x.sum(0)), torch.randn(3, 4))
    candidates = list(remove_single_nodes(case))
    as_input = [c for c in candidates if call_names(c) == ["relu"]]
    assert as_input
    assert as_input[0].inputs[0].shape == (4,)


def test_chunks_come_before_single_nodes_and_shrink_by_halves():
    case = capture_case(lambda x: torch.relu(torch.exp(torch.cos(torch.sin(torch.tanh(x))))) * 2, torch.randn(3))
    first = next(remove_node_chunks(case))
    assert operator_count(first) <= operator_count(case) - 3


def test_shrinking_keeps_linked_sizes_linked(block_case):
    candidates = list(shrink_dimensions(block_case))
    assert candidates
    halved = candidates[0]
    shapes = {spec.name: spec.shape for spec in halved.inputs}
    assert shapes["l_x_"] == (1, 3, 4)
    layer_norm = next(n for n in halved.gm.graph.nodes if getattr(n.target, "__name__", "") == "layer_norm")
    assert layer_norm.args[1] == (6,)
    view = next(n for n in halved.gm.graph.nodes if n.target == "view")
    assert view.args[1:] == (2, -1)  # was (4, -1)


def test_dtypes_simplify_to_float32():
    case = capture_case(lambda x, y: x * 2 + y, torch.randn(3, dtype=torch.float64), torch.randn(3, dtype=torch.float16))
    candidates = list(simplify_dtypes(case))
    assert [spec.dtype for spec in candidates[0].inputs] == [torch.float32, torch.float32]
    assert len(candidates) == 3


def test_parameters_become_plain_inputs(block_case):
    candidates = list(parameters_to_inputs(block_case))
    assert all(spec.kind == "input" for spec in candidates[0].inputs)
    assert "self." not in emit_script(candidates[0]).split("def forward")[1].split("model = Repro()")[0]


def test_merge_inputs_reads_one_input_where_two_are_alike():
    case = capture_case(lambda x, y, z: y + torch.sigmoid(x) * z, torch.randn(3), torch.randn(3), torch.randn(2, 3))
    merged = list(merge_inputs(case))
    assert [len(c.inputs) for c in merged] == [2]  # z is of another shape: only y reads x
    (out,) = merged[0].gm(torch.ones(3), torch.ones(2, 3))
    assert torch.allclose(out, 1 + torch.sigmoid(torch.ones(3)))


def test_drop_outputs_only_for_several():
    case = capture_case(lambda x: (torch.relu(x), torch.sin(x)), torch.randn(3))
    names = {tuple(call_names(c)) for c in drop_outputs(case)}
    assert names == {("sin",), ("relu",)}


_UNARY = [torch.relu, torch.sin, torch.tanh, torch.exp, lambda t: t * 2.0, lambda t: t.sum(-1, keepdim=True)]


@settings(max_examples=15, deadline=None)
@given(st.lists(st.integers(0, len(_UNARY) - 1), min_size=1, max_size=6), st.lists(st.integers(1, 6), min_size=1, max_size=3))
def test_property_candidates_propagate_and_never_grow(ops, shape):
    def fn(x):
        for index in ops:
            x = _UNARY[index](x)
        return x

    case = capture_case(fn, torch.randn(*shape))
    for propose in GRAPH_PASSES:
        for candidate in propose(case):
            assert propagate_shapes(candidate)
            assert case_size(candidate) <= case_size(case)


def test_a_truncated_graph_keeps_the_shapes_propagation_would_give(block_case):
    """Truncation only removes: its candidates skip re-propagation, and their kept shapes must still be right."""

    from minimizer.graph.case import tensor_outputs, value_of

    for candidate in truncate_to_intermediate(block_case):
        kept = {n.name: tuple(value_of(n).shape) for n in candidate.gm.graph.nodes if isinstance(value_of(n), torch.Tensor)}
        assert tensor_outputs(candidate)
        assert propagate_shapes(candidate)
        again = {n.name: tuple(value_of(n).shape) for n in candidate.gm.graph.nodes if isinstance(value_of(n), torch.Tensor)}
        assert kept == again
