import libcst as cst

from minimizer.source.passes.returns import drop_unread_returned_values


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
