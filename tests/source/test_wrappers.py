import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.structure.wrappers import bypass_wrapper_functions
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, module_classes, runs_and_computes, snippets


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in bypass_wrapper_functions(cst.parse_module(code))]


def test_wrapper_references_become_the_wrapped_callable():
    code = 'def run(x, y):\n    """Doc."""\n    return model.forward(x, y)\nout = torch.compile(run)(a, b)\nprint(run(1, 2))\n'
    assert candidates(code) == ["out = torch.compile(model.forward)(a, b)\nprint(model.forward(1, 2))\n"]


def test_a_prefix_of_the_parameters_may_be_passed():
    assert candidates("def f(x, unused):\n    return g(x)\nf(1, 2)\n") == ["g(1, 2)\n"]


def test_non_wrappers_are_skipped():
    assert candidates("def f(x):\n    return g(x).T\nf(1)\n") == []
    assert candidates("def f(x):\n    return g(x).sum()\nf(1)\n") == []
    assert candidates("def f(x, y):\n    return g(y, x)\nh = f\n") == []  # reordered, and not only called
    assert candidates("def f(x):\n    return x.g()\nf(1)\n") == []
    assert candidates("def f(x):\n    return f(x)\nf(1)\n") == []
    assert candidates("def f(x, y=2):\n    return g(x, y)\nf(1)\n") == []
    assert candidates("@deco\ndef f(x):\n    return g(x)\nf(1)\n") == []


def test_wrappers_used_where_the_callee_name_is_rebound_are_skipped():
    assert candidates("def f(x):\n    return h(x)\ndef user(h):\n    return h + f(1)\nuser(2)\n") == []


_PIECES = [
    "def f(x, y):\n    return torch.relu(x)\n",
    'def w(x):\n    """Doc."""\n    return f(x)\n',
    "out = torch.compile(w)(1)\n",
    "print(f(1, 2), w(3))\n",
    "def user(relu):\n    return f(relu, 1)\n",
]
_WRAPPER_PROGRAMS = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5).map("".join)


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes, _WRAPPER_PROGRAMS))
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, bypass_wrapper_functions)


def test_greedy_loop_removes_chains_of_wrappers():
    code = """\
import math
def inner(v):
    return math.floor(v)
def middle(v, tag=None):
    return inner(v)
def outer(v):
    return middle(v)
def doubled(v):
    return 2 * inner(v)
result = outer(3.5) + doubled(1.5)
"""
    reduced = greedy_reduce(code, bypass_wrapper_functions, runs_and_computes("result", 5))
    assert reduced == "import math\ndef doubled(v):\n    return 2 * math.floor(v)\nresult = math.floor(3.5) + doubled(1.5)\n"


def test_a_helper_that_returns_an_expression_is_inlined_at_each_call():
    from minimizer.source.passes.structure.wrappers import inline_expression_functions

    code = "import torch\n\n\ndef load(n=32):\n    '''Load.'''\n    return torch.randn(n, n)\n\n\nx = f(load())\n"
    found = [c.code for c in inline_expression_functions(cst.parse_module(code))]
    assert found == ["import torch\n\n\nx = f(torch.randn(32, 32))\n"]
    twice = [c.code for c in inline_expression_functions(cst.parse_module(code + "y = load(2)\n"))]
    assert twice == ["import torch\n\n\nx = f(torch.randn(32, 32))\ny = torch.randn(2, 2)\n"]
    passed_around = code + "y = g(load)\n"
    assert [c.code for c in inline_expression_functions(cst.parse_module(passed_around))] == []
    with_argument = [c.code for c in inline_expression_functions(cst.parse_module(code.replace("load())", "load(4))")))]
    assert with_argument == ["import torch\n\n\nx = f(torch.randn(4, 4))\n"]
    generator = "def batches():\n    return (yield 1)\n\n\nx = batches()\n"
    assert [c.code for c in inline_expression_functions(cst.parse_module(generator))] == []


def test_a_helper_called_with_arguments_computes_what_it_did_and_computes_each_argument_once():
    from minimizer.source.passes.structure.wrappers import inline_expression_functions

    def inlined(code):
        return [c.code for c in inline_expression_functions(cst.parse_module(code))]

    code = "def forces(fn, p, scale=2):\n    return fn(p) * scale + p + base\n\n\nresult = forces(abs, q, scale=3 - 1)\n"
    (found,) = inlined(code)
    assert found.strip() == "result = abs(q) * (3 - 1) + q + base"
    values = {"q": -4, "base": 10}
    original = dict(values)
    exec(code.split("\n\n\nresult")[0], original)
    assert eval(found.split(" = ", 1)[1], values) == eval("forces(abs, q, scale=3 - 1)", original)
    # `p` is read twice: an argument that computes something would be computed twice.
    assert inlined(code.replace("forces(abs, q,", "forces(abs, make(),")) == []
    # The call's own scope binds `base`, which the helper reads from the module.
    assert inlined(code.replace("result = forces(abs, q, scale=3 - 1)", "def g(base):\n    return forces(abs, q)")) == []



def test_a_helper_returning_a_comprehension_is_inlined_where_no_name_it_binds_is_replaced():
    from minimizer.source.passes.structure.wrappers import inline_expression_functions

    code = "def evaluate(model, batches):\n    return [model(b) for b in batches]\n\n\nevaluate(opt, data)\nevaluate(m, data)\n"
    assert [c.code for c in inline_expression_functions(cst.parse_module(code))] == [
        "\n\n[opt(b) for b in data]\n[m(b) for b in data]\n"
    ]
    # The argument `b` would land under the comprehension's own `b`.
    clash = code.replace("evaluate(m, data)", "evaluate(b, data)")
    assert [c.code for c in inline_expression_functions(cst.parse_module(clash))] == []


def test_a_wrapper_that_adds_literals_is_bypassed_where_it_is_called_compiled_or_directly():
    code = "def repro(x):\n    return torch.topk(x, 1, dim=0)\ntorch.compile(repro, backend='moe')(torch.ones(1))\nrepro(y)\n"
    assert candidates(code) == [
        "torch.compile(torch.topk, backend='moe')(torch.ones(1), 1, dim=0)\ntorch.topk(y, 1, dim=0)\n"
    ]


def test_a_wrapper_that_adds_literals_is_bypassed_only_at_calls_with_one_positional_argument_per_parameter():
    assert candidates("def f(x):\n    return g(x, 1)\nh = f\n") == []
    assert candidates("def f(x):\n    return g(x, 1)\nf(x=2)\n") == []
    assert candidates("def f(x, y):\n    return g(x, 1)\nf(2, 3)\n") == ["g(2, 1)\n"]  # called: the unread one goes
    assert candidates("def f(x):\n    return g(x, z)\nf(2)\n") == []


def test_a_wrapper_that_reorders_its_parameters_is_bypassed_at_its_calls():
    code = "def repro(w, x):\n    return conv2d(x, w)\ntorch.compile(repro)(a, b)\ny = repro(c, d)\n"
    assert candidates(code) == ["torch.compile(conv2d)(b, a)\ny = conv2d(d, c)\n"]


def test_a_wrapper_that_drops_the_value_is_bypassed_only_where_the_value_goes_unused():
    code = "def repro(w, x):\n    conv2d(x, w)\ntorch.compile(repro)(a, b)\nrepro(a, b)\n"
    assert candidates(code) == ["torch.compile(conv2d)(b, a)\nconv2d(b, a)\n"]
    assert candidates("def repro(x):\n    g(x, 1)\ny = repro(a)\n") == []


def test_a_lambda_bound_to_a_name_is_inlined_like_a_helper():
    # check_lambda_all_kernel: `close = lambda a, b: torch.allclose(a, b)` read in the check's generator.
    from minimizer.source.passes.structure.wrappers import inline_expression_functions

    code = "close = lambda a, b: torch.allclose(a, b)\nassert all(close(o, r) for o, r in pairs)\n"
    found = [c.code for c in inline_expression_functions(cst.parse_module(code))]
    assert found == ["assert all(torch.allclose(o, r) for o, r in pairs)\n"]
    passed_around = code + "check(close)\n"
    assert [c.code for c in inline_expression_functions(cst.parse_module(passed_around))] == []
