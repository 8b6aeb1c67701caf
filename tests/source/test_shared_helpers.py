"""The helpers the source passes share: a candidate stream resumed part-way, a module settled, a tree read fast,
statements rendered once and remembered."""

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_node
from minimizer.source.rendering import settled


def test_a_resumed_stream_builds_nothing_it_skips_and_numbers_by_position():
    module = cst.parse_module("a = 1\nb = 2\nc = 3\nd = 4\n")
    statements = list(module.body)
    built = []

    def builders():
        for statement in statements:
            def build(statement=statement):
                built.append(statement)
                return remove_node(module, statement)
            yield build
        yield lambda: module  # the original again: filtered out

    stream = distinct_candidates(module, builders())
    stream.skip(2)
    first = next(stream)
    assert built == [statements[2]] and stream.position == 2
    assert first.code == "a = 1\nb = 2\nd = 4\n"
    assert [c.code for c in stream] == ["a = 1\nb = 2\nc = 3\n"] and stream.position == 3


def test_settled_gives_one_fresh_module_per_code():
    module = cst.parse_module("x = 1\ny = x\n")
    candidate = remove_node(module, module.body[1])
    fresh = settled(candidate)
    assert fresh.code == candidate.code and fresh is settled(candidate)
    assert fresh.body[0] is not module.body[0]  # nodes of its own, not shared with the module it came from


def _every_node(module):
    stack = [module]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(node.children)


def test_children_are_libcsts_children_in_order_for_every_node_of_the_examples():
    from pathlib import Path

    from minimizer.source.traversal import children

    examples = sorted(Path(__file__).resolve().parents[2].glob("examples/**/*.py"))
    assert examples
    kinds = set()
    for path in examples:
        for node in _every_node(cst.parse_module(path.read_text())):
            kinds.add(type(node))
            assert [id(child) for child in children(node)] == [id(child) for child in node.children], type(node)
    assert len(kinds) > 60  # the examples exercise most node types


def test_find_all_finds_what_libcst_finds_in_the_same_order():
    from minimizer.source.traversal import find_all

    module = cst.parse_module(
        "import torch as t\nclass A:\n    def f(self, x):\n        return t.relu(x) + self.g(x)\nA().f(t.ones(2))\n"
    )
    for matcher in (
        m.Call(),
        m.Attribute(attr=m.Name("relu")),
        m.Name(),
        m.Call() | m.Name("x"),  # several types: libcst's own search
        m.FunctionDef(name=m.Name("f")),
    ):
        assert find_all(module, matcher) == m.findall(module, matcher)
    body = module.body[1]
    assert find_all(body, m.Name()) == m.findall(body, m.Name())


def test_rendering_with_remembered_statements_gives_libcsts_code_for_every_candidate():
    import itertools
    from pathlib import Path

    from minimizer.source import rendering
    from minimizer.source.format import source_passes

    example = Path(__file__).resolve().parents[2] / "examples" / "triton_inplace_grad.py"
    module = settled(cst.parse_module(example.read_text()))
    assert rendering.render(module) == module.code
    checked = 0
    for reduction_pass in source_passes():
        for candidate in itertools.islice(reduction_pass.propose(module), 10):
            assert rendering.code_of(candidate, candidate) == candidate.code, reduction_pass.name
            checked += 1
    assert checked > 50
    nested = module.body[-1]
    assert rendering.code_of(module, nested) == module.code_for_node(nested)
