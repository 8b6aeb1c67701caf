import libcst as cst

from minimizer.source.passes.items.comprehensions import collapse_single_item_comprehensions, loops_over_one_item


def codes(source):
    return [c.code for c in collapse_single_item_comprehensions(cst.parse_module(source))]


def test_a_comprehension_over_one_item_becomes_a_list_of_it():
    assert codes("blocks = nn.ModuleList(Block(c) for _ in range(1))\n") == ["blocks = nn.ModuleList([Block(c)])\n"]
    assert codes("xs = [f() for i in range(1)]\n") == ["xs = [f()]\n"]


def test_comprehensions_that_run_more_than_once_or_would_compute_an_item_twice_stay():
    for source in [
        "xs = [f() for _ in range(2)]\n", "xs = [f() for _ in range(1) if c]\n", "xs = [o for o in zip([a], b)]\n",
        "xs = [(o, o) for o in [g()]]\n", "xs = [o for o, r in [pair]]\n", "xs = [o for o in enumerate([a], 1)]\n",
    ]:
        assert codes(source) == [], source


def test_a_comprehension_over_one_item_binds_its_names_to_the_item():
    # Never-seen seed 422: the labelled pairs of a case table, left at one pair.
    source = "for out, ref in [(o, r) for i, (o, r) in enumerate(zip([out], [shift]))]:\n    check(out, ref)\n"
    assert codes(source) == ["for out, ref in [(out, shift)]:\n    check(out, ref)\n"]
    assert codes("xs = [f(i) for i in range(1)]\n") == ["xs = [f(0)]\n"]
    assert codes("xs = (g(x) for x in (h(),))\n") == ["xs = [g(h())]\n"]


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


def test_a_dict_of_metrics_over_one_case_becomes_its_one_entry():
    # Never-seen seed 504: the metrics dict of a check, left at one case.
    source = 'metrics = {name: {"max_abs": (out - ref).abs().max()} for name, out, ref in [("step", out, shift)]}\n'
    assert codes(source) == ['metrics = {"step": {"max_abs": (out - shift).abs().max()}}\n']
    assert codes("d = {k: f(v) for k, v in [(a, g())] if v}\n") == []  # a filter may drop the entry


def test_a_loop_over_the_items_of_a_one_entry_dict_is_one_iteration():
    from minimizer.source.passes.items.comprehensions import one_item

    def item(source):
        found = one_item(cst.parse_expression(source))
        return None if found is None else cst.Module([]).code_for_node(found)

    assert item('{"a": x}.items()') == '("a", x)'
    assert (item('{"a": x}.values()'), item('{"a": x}'), item('{"a": x, "b": y}.items()')) == ("x", '"a"', None)
