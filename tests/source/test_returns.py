import libcst as cst

from minimizer.source.passes.signatures.returns import drop_unread_returned_values, return_the_element_read


def codes(source):
    return [candidate.code for candidate in drop_unread_returned_values(cst.parse_module(source))]


STEP = """import torch


def step(x):
    y = x * 2
    if x.sum() > 0:
        return y, {"attached": y.requires_grad}
    return x, {}


target, info = torch.compile(step)(torch.ones(1))
assert not info["attached"]
"""


def test_a_returned_value_no_call_site_reads_goes_with_its_name():
    (code,) = codes(STEP)
    assert 'return {"attached": y.requires_grad}\n' in code and "    return {}\n" in code
    assert "info = torch.compile(step)(torch.ones(1))\n" in code
    scope: dict = {}
    exec(code.replace("torch.compile(step)", "step"), scope)  # still runs: what was read is what is returned
    assert scope["info"] == {"attached": False}


def test_three_values_keep_a_tuple_and_read_names_stay():
    source = "def f(x):\n    return x, x + 1, x + 2\n\n\na, b, c = f(1)\nb, d, e = f(2)\nprint(b, d)\n"
    # Position 0 is read at the second site (`b`), position 1 there too (`d`): only the last goes.
    assert codes(source) == ["def f(x):\n    return x, x + 1\n\n\na, b = f(1)\nb, d = f(2)\nprint(b, d)\n"]


def test_functions_used_other_than_by_an_unpacking_call_stay():
    for source in [
        "def f(x):\n    return x, x\n\n\na, b = f(1)\nc = f(2)\n",
        "def f(x):\n    return x, x\n\n\na, b = f(1)\ng = f\n",
        "def f(x):\n    if x:\n        return x\n    return x, x\n\n\na, b = f(1)\n",
    ]:
        assert codes(source) == [], source


def element_codes(source):
    return [candidate.code for candidate in return_the_element_read(cst.parse_module(source))]


def test_a_returned_dict_read_at_one_key_returns_that_value():
    source = (
        "import torch\n\n\ndef bootstrap(q):\n    t = q.max(-1).values\n    t.detach_()\n"
        '    return {"loss": t.sum(), "attached": t.requires_grad}\n\n\n'
        'assert not torch.compile(bootstrap)(torch.ones(1, requires_grad=True))["attached"], "attached"\n'
    )
    (code,) = element_codes(source)
    assert "    return t.requires_grad\n" in code
    assert "assert not torch.compile(bootstrap)(torch.ones(1, requires_grad=True)), " in code
    scope: dict = {}
    exec(code.replace("torch.compile(bootstrap)", "bootstrap"), scope)  # the same value is asserted on


def test_a_function_compiled_with_options_is_read_at_its_call_too():
    # dyn_detach_dataclass_method's lifted call: `torch.compile(targets, backend="eager")(x)[1]`.
    source = 'def f(x):\n    return x, x.requires_grad\n\n\nout = torch.compile(f, backend="eager")(x)[1]\n'
    assert element_codes(source) == ['def f(x):\n    return x.requires_grad\n\n\nout = torch.compile(f, backend="eager")(x)\n']


def test_a_returned_tuple_read_at_one_index_at_every_call_returns_that_element():
    source = "def f(x):\n    if x:\n        return x, 1\n    return x + 1, 2\n\n\na = f(1)[1]\nb = f(0)[1]\n"
    assert element_codes(source) == ["def f(x):\n    if x:\n        return 1\n    return 2\n\n\na = f(1)\nb = f(0)\n"]


def test_results_read_otherwise_or_at_other_keys_stay():
    for source in [
        'def f(x):\n    return {"a": x, "b": x}\n\n\nc = f(1)["a"]\nd = f(1)["b"]\n',  # two keys
        'def f(x):\n    return {"a": x}\n\n\nc = f(1)["a"]\nd = f(1)\n',  # a whole result read
        'def f(x):\n    return {"a": x, **extra}\n\n\nc = f(1)["a"]\n',  # unpacked: "a" may come from it
        'def f(x):\n    if x:\n        return {"a": x}\n    return {}\n\n\nc = f(1)["a"]\n',  # a return without it
        'def f(x):\n    return x\n\n\nc = f([1])[0]\n',  # not a literal
    ]:
        assert element_codes(source) == [], source


def test_a_call_of_a_local_function_of_the_same_name_is_not_a_use():
    source = (
        'def f(x):\n    return {"a": x}\n\n\nprint(f(1))\n\n\n'
        'def g():\n    def f(y):\n        return {"a": y}\n\n    return f(2)["a"]\n'
    )
    assert element_codes(source) == []


def test_a_tuple_compared_whole_returns_one_of_its_values_in_turn():
    from minimizer.source.passes.signatures.returns import return_one_of_the_values

    code = "def f(x):\n    y = x * 2\n    return y, y.requires_grad\nassert_close(torch.compile(f)(x), f(x))\n"
    got = [c.code for c in return_one_of_the_values(cst.parse_module(code))]
    assert [g.splitlines()[2] for g in got] == ["    return y", "    return y.requires_grad"]
    unpacked = code.replace("assert_close(torch.compile(f)(x), f(x))", "a, b = f(x)")
    indexed = code.replace("assert_close(torch.compile(f)(x), f(x))", "check(f(x)[1])")
    for text in (unpacked, indexed):
        assert list(return_one_of_the_values(cst.parse_module(text))) == []


def test_a_dict_compared_whole_returns_its_value():
    from minimizer.source.passes.signatures.returns import return_one_of_the_values

    code = 'def f(x):\n    return {"attached": x.requires_grad}\nassert_close(torch.compile(f)(x), f(x))\n'
    got = [c.code for c in return_one_of_the_values(cst.parse_module(code))]
    assert got == ['def f(x):\n    return x.requires_grad\nassert_close(torch.compile(f)(x), f(x))\n']
    single = 'def f(x):\n    return (x,)\nassert_close(f(x), x)\n'  # a one-tuple stays: a tuple is what it returns
    assert list(return_one_of_the_values(cst.parse_module(single))) == []
