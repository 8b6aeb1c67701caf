import libcst as cst

from minimizer.source.passes.comprehensions import collapse_single_item_comprehensions, loops_over_one_item


def codes(source):
    return [c.code for c in collapse_single_item_comprehensions(cst.parse_module(source))]


def test_a_comprehension_over_one_item_becomes_a_list_of_it():
    assert codes("blocks = nn.ModuleList(Block(c) for _ in range(1))\n") == ["blocks = nn.ModuleList([Block(c)])\n"]
    assert codes("xs = [f() for i in range(1)]\n") == ["xs = [f()]\n"]


def test_comprehensions_that_read_their_variable_or_run_more_than_once_stay():
    for source in ["xs = [f(i) for i in range(1)]\n", "xs = [f() for _ in range(2)]\n", "xs = [f() for _ in range(1) if c]\n"]:
        assert codes(source) == [], source


def test_a_name_bound_to_one_item_read_only_by_comprehensions_becomes_the_item():
    source = (
        "import torch\nmodel = torch.nn.Linear(1, 1)\nbatches = [torch.ones(1)]\n"
        "[torch.compile(model)(batch) for batch in batches]\nscores = [model(b).sum() for b in batches]\n"
    )
    [unrolled] = [module.code for module in loops_over_one_item(cst.parse_module(source))]
    assert unrolled == (
        "import torch\nmodel = torch.nn.Linear(1, 1)\nbatches = torch.ones(1)\n"
        "torch.compile(model)(batches)\nscores = [model(batches).sum()]\n"
    )


def test_a_name_read_otherwise_or_a_comprehension_with_a_condition_is_left_alone():
    for source in (
        "batches = [1]\n[f(b) for b in batches]\nprint(batches)\n",
        "batches = [1]\n[f(b) for b in batches if b]\n",
        "batches = [1, 2]\n[f(b) for b in batches]\n",
    ):
        assert list(loops_over_one_item(cst.parse_module(source))) == [], source
