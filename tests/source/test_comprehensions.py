import libcst as cst

from minimizer.source.passes.comprehensions import collapse_single_item_comprehensions


def codes(source):
    return [c.code for c in collapse_single_item_comprehensions(cst.parse_module(source))]


def test_a_comprehension_over_one_item_becomes_a_list_of_it():
    assert codes("blocks = nn.ModuleList(Block(c) for _ in range(1))\n") == ["blocks = nn.ModuleList([Block(c)])\n"]
    assert codes("xs = [f() for i in range(1)]\n") == ["xs = [f()]\n"]


def test_comprehensions_that_read_their_variable_or_run_more_than_once_stay():
    for source in ["xs = [f(i) for i in range(1)]\n", "xs = [f() for _ in range(2)]\n", "xs = [f() for _ in range(1) if c]\n"]:
        assert codes(source) == [], source
