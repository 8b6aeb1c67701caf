import libcst as cst

from minimizer.source.passes.names.tuples import split_tuple_assignments
from minimizer.source.passes.statements.effectless import remove_effectless_statements


def codes(reduction_pass, source):
    return [candidate.code for candidate in reduction_pass(cst.parse_module(source))]


LEFTOVERS = """import torch
x = torch.ones(1)
for block in blocks:
    x
target_net
y = x * 2
"""


def test_leftover_reads_and_a_loop_that_does_nothing_go_at_once_first():
    first, *singles = codes(remove_effectless_statements, LEFTOVERS)
    assert first == "import torch\nx = torch.ones(1)\ny = x * 2\n"
    assert "import torch\nx = torch.ones(1)\ntarget_net\ny = x * 2\n" in singles  # the loop alone
    assert len(singles) == 2  # the loop's body goes with the loop, not as its own candidate


def test_statements_with_effects_and_loops_over_calls_stay():
    source = "import torch\nprint(x)\nx.add_(1)\nfor i in range(3):\n    pass\nfor b in make_blocks():\n    pass\n"
    assert codes(remove_effectless_statements, source) == []


def test_a_tuple_assignment_splits_into_one_per_name():
    source = "online, target = make(), build(config)\n"
    assert codes(split_tuple_assignments, source) == ["online = make()\ntarget = build(config)\n"]


def test_list_unpacking_and_a_single_name_split_too():
    assert codes(split_tuple_assignments, "batch, = [1]\n") == ["batch = 1\n"]
    assert codes(split_tuple_assignments, "[a, b] = [x, y]\n") == ["a = x\nb = y\n"]


def test_a_value_may_read_its_own_target_and_a_self_assignment_goes():
    source = "indices, features = indices, expected\n"
    assert codes(split_tuple_assignments, source) == ["features = expected\n"]
    assert codes(split_tuple_assignments, "a, b = a + 1, c\n") == ["a = a + 1\nb = c\n"]
    assert codes(split_tuple_assignments, "a, b = c, a + 1\n") == []  # b would read the new a


def test_swaps_starred_and_nested_targets_stay_whole():
    for source in ["a, b = b, a\n", "a, *b = x, y, z\n", "(a, b), c = x, y\n", "a, b = pair\n", "a, b = x, y, z\n"]:
        assert codes(split_tuple_assignments, source) == [], source


def test_a_pair_goes_from_both_sides_of_a_tuple_assignment_at_once():
    import libcst as cst

    from minimizer.source.passes.names.tuples import split_tuple_assignments

    code = 'name, out, ref = f"step{s}", f(x), g(x)\ncheck(out, ref)\n'
    got = {c.code for c in split_tuple_assignments(cst.parse_module(code))}
    assert 'out, ref = f(x), g(x)\ncheck(out, ref)\n' in got
    assert 'name, ref = f"step{s}", g(x)\ncheck(out, ref)\n' in got  # the run turns it down: `out` is read


def test_items_before_a_starred_value_bind_on_their_own_and_the_rest_unpacks_it():
    # A row unwrapped from a table of cases: its label, then what the helper returns.
    source = 'name, out, ref = "eval", *evaluate(x)\n'
    assert codes(split_tuple_assignments, source) == ['name = "eval"\nout, ref = evaluate(x)\n']
    assert codes(split_tuple_assignments, "a, b, c = 1, *f(a)\n") == []  # f would read the new a
    assert codes(split_tuple_assignments, "a, b = 1, *f()\n") == []  # b = [*f()] is no smaller
