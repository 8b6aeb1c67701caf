import libcst as cst

from minimizer.source.passes.items.elements import delete_collection_elements


def codes(source):
    return [c.code for c in delete_collection_elements(cst.parse_module(source))]


def test_each_entry_of_a_dict_or_list_goes_last_first():
    assert codes('info = {"attached": a, "mean": b}\n') == ['info = {"attached": a}\n', 'info = {"mean": b}\n']
    assert codes("xs = [f(), g()]\n") == ["xs = [f()]\n", "xs = [g()]\n"]


def test_tuples_and_single_entries_stay():
    assert codes("shape = (2, 3)\nx = [a]\ny = {k: v}\n") == []


def test_a_one_item_list_argument_is_passed_as_its_item():
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    source = "g = torch.autograd.grad(outputs=[loss], inputs=[z])\ny = torch.cat([a, b])\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source))] == [
        "g = torch.autograd.grad(outputs=loss, inputs=[z])\ny = torch.cat([a, b])\n",
        "g = torch.autograd.grad(outputs=[loss], inputs=z)\ny = torch.cat([a, b])\n",
    ]


def test_a_one_item_list_or_tuple_unpacked_into_a_call_is_passed_as_its_item():
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    source = "blocks = nn.Sequential(*[Block()])\nx = f(*(a,))\ny = g(*[a, b])\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source))] == [
        "blocks = nn.Sequential(Block())\nx = f(*(a,))\ny = g(*[a, b])\n",
        "blocks = nn.Sequential(*[Block()])\nx = f(a)\ny = g(*[a, b])\n",
        "blocks = nn.Sequential(*[Block()])\nx = f(*(a,))\ny = g(a, b)\n",
    ]


def test_a_longer_list_unpacked_into_a_call_is_passed_as_its_items():
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    source = "out = f(x, *[w, b], scale=2)\ny = g(*args)\nz = h(*[*rest, c])\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source))] == [
        "out = f(x, w, b, scale=2)\ny = g(*args)\nz = h(*[*rest, c])\n",
    ]


def test_a_one_item_list_bound_to_a_name_only_unpacked_into_calls_is_its_item():
    # The graph lift writes `inputs = [x]` and `compiled(*inputs)` (buried_cond_case_table kept both).
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    source = "inputs = [torch.ones(2, 2)]\nassert torch.allclose(g(*inputs), f(*inputs))\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source))] == [
        "inputs = torch.ones(2, 2)\nassert torch.allclose(g(inputs), f(inputs))\n",
    ]
    read_otherwise = source + "first = inputs[0]\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(read_otherwise))] == []


def test_a_one_item_list_bound_to_a_name_passed_to_calls_is_its_item():
    # check_lambda_all_kernel kept `widths = [1]` read by three `torch.ones(widths)`: neither inlining the list nor
    # shrinking it made the repro smaller, the item bound to the name does (then the literal is inlined).
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    source = "widths = [1]\nx = torch.ones(widths)\nassert torch.allclose(k(x), torch.ones(size=widths))\n"
    assert [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source))] == [
        "widths = 1\nx = torch.ones(widths)\nassert torch.allclose(k(x), torch.ones(size=widths))\n",
    ]


def test_all_or_any_of_one_item_is_its_item_where_only_its_truth_is_read():
    from minimizer.source.passes.items.elements import unwrap_single_item_list_arguments

    def truths(source):
        return [c.code for c in unwrap_single_item_list_arguments(cst.parse_module(source)) if "all(" not in c.code and "any(" not in c.code]

    assert truths("assert all([torch.allclose(out, ref)]), 'differs'\n") == ["assert torch.allclose(out, ref), 'differs'\n"]
    assert truths("if not any((a or b,)):\n    raise E\n") == ["if not (a or b):\n    raise E\n"]
    assert truths("ok = all([close])\n") == []  # its value is a bool, where `close` may be a tensor


def test_a_tuple_a_loop_goes_over_loses_entries_and_one_left_is_a_list_of_it():
    assert codes('for v in (a, b):\n    f(v)\n') == ['for v in [a]:\n    f(v)\n', 'for v in [b]:\n    f(v)\n']
    assert codes('for k in "x", "y":\n    f(k)\n')[0] == 'for k in ["x"]:\n    f(k)\n'
    assert codes("ys = [f(v) for v in (a, b, c)]\n")[0] == "ys = [f(v) for v in (a, b)]\n"
    assert codes("for v in f(a, b):\n    g(v)\nout, extra = h()\n") == []  # not displays the loop goes over


def test_a_tuple_a_loop_reaches_through_enumerate_or_its_one_name_loses_entries():
    assert codes("for i, c in enumerate((a, b)):\n    f(i, c)\n")[0] == "for i, c in enumerate([a]):\n    f(i, c)\n"
    assert codes("CONFIGS = a, b\nfor s, c in enumerate(CONFIGS):\n    f(c)\n")[0] == (
        "CONFIGS = [a]\nfor s, c in enumerate(CONFIGS):\n    f(c)\n")
    assert codes("SIZES = (2, 3)\nfor n in SIZES:\n    f(n)\n")[1] == "SIZES = [3]\nfor n in SIZES:\n    f(n)\n"
    # a name bound twice, or a tuple the loop does not reach, is left alone (a shape, an unpacked return)
    assert codes("S = (2, 3)\nS = (4, 5)\nfor n in S:\n    f(n)\nshape = (2, 3)\n") == []


def test_a_tuple_a_loop_reaches_through_a_config_field_loses_entries():
    field = "@dataclass\nclass C:\n    sizes: tuple = (8, 16)\n\ndef run(c):\n    for n in c.sizes:\n        f(n)\n"
    assert codes(field)[0] == field.replace("(8, 16)", "[8]")
    default = "def run(sizes=(2, 3)):\n    for n in sizes:\n        f(n)\n"
    assert codes(default)[1] == default.replace("(2, 3)", "[3]")
    keyword = "run(C(sizes=(2, 3)))\nfor n in self.sizes:\n    f(n)\n"
    assert codes(keyword)[0] == keyword.replace("(2, 3)", "[2]")
    # bound twice under that name (a field and a keyword), the tuples are left alone
    assert codes(field + "run(C(sizes=(4, 5)))\n") == []
