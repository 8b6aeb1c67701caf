import libcst as cst

from minimizer.source.cst_utils import distinct_candidates, remove_node, settled


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
