import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.signatures.parameters import bind_constant_parameters, remove_unused_parameters
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, module_classes, runs_and_computes, snippets


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in remove_unused_parameters(cst.parse_module(code))]


def test_unread_parameter_and_its_arguments_go_in_source_order():
    code = "def f(a, b, *, c=1, d):\n    return d\nf(1, 2, d=3, c=4)\nf(5, b=6, d=7)\n"
    assert candidates(code) == [
        "def f(b, *, c=1, d):\n    return d\nf(2, d=3, c=4)\nf(b=6, d=7)\n",
        "def f(a, *, c=1, d):\n    return d\nf(1, d=3, c=4)\nf(5, d=7)\n",
        "def f(a, b, *, d):\n    return d\nf(1, 2, d=3)\nf(5, b=6, d=7)\n",
    ]


def test_calls_through_torch_compile_are_call_sites():
    code = (
        "def rotate(v, points):\n    return v.T\n"
        "out = torch.compile(rotate, backend=b)(x, 'cpu')\n"
        "g = torch.compile(rotate)\ng(x, p)\n"
    )
    assert candidates(code) == [
        "def rotate(v):\n    return v.T\nout = torch.compile(rotate, backend=b)(x)\ng = torch.compile(rotate)\ng(x)\n"
    ]


def test_calls_through_a_transform_that_passes_the_arguments_on_are_call_sites():
    code = (
        "def loss(w, x, target):\n    return (w * x).sum()\n"
        "def step(w, x, target):\n    return torch.func.grad(loss)(w, x, target)\n"
        "torch.compile(torch.func.grad(loss))(w, x, t)\n"
    )
    assert candidates(code)[0] == (
        "def loss(w, x):\n    return (w * x).sum()\n"
        "def step(w, x, target):\n    return torch.func.grad(loss)(w, x)\n"
        "torch.compile(torch.func.grad(loss))(w, x)\n"
    )


def test_a_transform_told_which_argument_is_which_hides_the_call_sites():
    # argnums counts positions: taking one out would change which argument is differentiated.
    code = "def loss(w, x, target):\n    return (w * x).sum()\ntorch.func.grad(loss, argnums=1)(w, x, t)\n"
    assert candidates(code) == []


def test_triton_kernel_launches_are_call_sites():
    code = (
        "@triton.jit\ndef kernel(x_ptr, dy_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr, n)\n"
        "kernel[(n,)](x, dy, n, BLOCK=4)\n"
    )
    assert candidates(code) == [
        "@triton.jit\ndef kernel(x_ptr, n, BLOCK: tl.constexpr):\n    tl.store(x_ptr, n)\nkernel[(n,)](x, n, BLOCK=4)\n",
        "@triton.jit\ndef kernel(x_ptr, dy_ptr, n):\n    tl.store(x_ptr, n)\nkernel[(n,)](x, dy, n)\n",
    ]
    autotuned = "@triton.autotune(configs=[], key=['n'])\n" + code
    assert candidates(autotuned) == []
    assert candidates(code.replace("kernel[(n,)](", "launch = kernel[(n,)]\nlaunch(")) == []


def test_last_keyword_only_parameter_takes_the_bare_star_and_trailing_comma_along():
    assert candidates("def f(a, *, k):\n    return a\nf(1, k=2)\n") == ["def f(a):\n    return a\nf(1)\n"]
    assert candidates("def f(a, /, b):\n    return b\nf(1, 2)\n") == ["def f(b):\n    return b\nf(2)\n"]


def test_methods_keep_self_and_shift_positions():
    code = "class C:\n    def m(self, a, b):\n        return b\nc = C()\nc.m(1, 2)\nC.m(c, 3, 4)\n"
    assert candidates(code) == ["class C:\n    def m(self, b):\n        return b\nc = C()\nc.m(2)\nC.m(c, 4)\n"]


def test_functions_with_unknown_callers_keep_their_required_parameters():
    assert candidates("def f(a, b):\n    return b\nh = f\n") == []
    assert candidates("def f(a, b):\n    return b\nf(*xs)\n") == []
    assert candidates("@functools.cache\ndef f(a, b):\n    return b\nf(1, 2)\n") == []
    assert candidates("class M:\n    def forward(self, x, y):\n        return x\n") == []
    assert candidates("def f(*args, **kwargs):\n    return 1\nf(1, k=2)\n") == []


def test_reads_in_nested_functions_count():
    assert candidates("def f(a, b):\n    def h():\n        return a\n    return h\nf(1, 2)\n") == [
        "def f(a):\n    def h():\n        return a\n    return h\nf(1)\n"
    ]


_PIECES = [
    "def f(a, b, *, k=1):\n    return b\n",
    "def h(a, /, b, *rest):\n    return rest\n",
    "f(1, 2, k=3)\n",
    "f(a=1, b=2)\n",
    "h(1, 2, 3)\n",
    "g = torch.compile(f)\ng(1, b=2)\n",
    "torch.compile(h, backend='eager')(1, 2)\n",
    "class C:\n    def m(self, a, b):\n        return a\n",
    "C().m(1, b=2)\nC.m(c, 1, 2)\n",
]
_CALLING_PROGRAMS = st.lists(st.sampled_from(_PIECES), min_size=1, max_size=5).map("".join)


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes, _CALLING_PROGRAMS))
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, remove_unused_parameters)


def test_greedy_loop_strips_every_unread_parameter():
    code = """\
def scale(x, factor, name="s", *, verbose=False):
    return x * 3
class Box:
    def get(self, key, default):
        return key + 1
def run(x, device):
    return scale(x, 2, "a", verbose=True) + Box().get(x, None)
result = run(4, "cpu")
"""
    reduced = greedy_reduce(code, remove_unused_parameters, runs_and_computes("result", 17))
    assert reduced == """\
def scale(x):
    return x * 3
class Box:
    def get(self, key):
        return key + 1
def run(x):
    return scale(x) + Box().get(x)
result = run(4)
"""


def test_unused_constructor_parameter_goes_with_its_argument_at_every_construction():
    code = (
        "class Block(nn.Module):\n"
        "    def __init__(self, config, width):\n"
        "        super().__init__()\n"
        "        self.lin = nn.Linear(width, width)\n"
        "\n"
        "\n"
        "a = Block(cfg, 4)\n"
        "b = Block(config=cfg, width=8)\n"
    )
    found = [c.code for c in remove_unused_parameters(cst.parse_module(code))]
    assert found == [code.replace("self, config, width", "self, width").replace("Block(cfg, 4)", "Block(4)")
                     .replace("Block(config=cfg, width=8)", "Block(width=8)")]


def test_a_base_class_keeps_its_constructor():
    code = (
        "class Base:\n"
        "    def __init__(self, config):\n"
        "        pass\n"
        "\n"
        "\n"
        "class Child(Base):\n"
        "    pass\n"
        "\n"
        "\n"
        "c = Child(1)\n"
    )
    assert list(remove_unused_parameters(cst.parse_module(code))) == []


CUSTOM_OP = '''import torch


@torch.library.custom_op("corpus::scale", mutates_args=())
def scale(x: torch.Tensor, eps: float) -> torch.Tensor:
    return x * 2


@scale.register_fake
def _(x, eps):
    return x.new_empty(x.shape[:-1])


y = scale(torch.ones(1, 1), 1e-6)
'''


def test_a_custom_op_loses_a_parameter_nothing_registered_for_it_reads():
    import libcst as cst

    from minimizer.source.passes.signatures.parameters import remove_unused_parameters

    (code,) = [c.code for c in remove_unused_parameters(cst.parse_module(CUSTOM_OP))]
    assert "def scale(x: torch.Tensor) -> torch.Tensor:" in code and "def _(x):" in code
    assert code.endswith("y = scale(torch.ones(1, 1))\n")
    fake_reads_it = CUSTOM_OP.replace("x.shape[:-1]", "x.shape[:-1] if eps else x.shape")
    assert [c.code for c in remove_unused_parameters(cst.parse_module(fake_reads_it))] == []


def bound(code: str) -> list[str]:
    return [candidate.code for candidate in bind_constant_parameters(cst.parse_module(code))]


def test_an_option_the_script_never_passes_reads_its_default():
    code = (
        "class Net:\n    def __init__(self, width, blocks=2):\n        self.layers = [width] * blocks\n"
        "net = Net(3)\nother = Net(4)\n"
    )
    expected = "class Net:\n    def __init__(self, width):\n        self.layers = [width] * 2\nnet = Net(3)\nother = Net(4)\n"
    assert bound(code) == [expected]  # `width` varies between the constructions: it stays
    assert runs_and_computes("layers", [3, 3])(expected + "layers = net.layers\n")


def test_a_parameter_every_call_gives_the_same_constant_is_bound_by_position_or_keyword():
    code = "def scale(a, size, eps=1e-5):\n    return a * size + eps\nx = scale(2, 16)\ny = scale(3, size=16, eps=1e-5)\n"
    assert bound(code) == [
        "def scale(a, eps=1e-5):\n    return a * 16 + eps\nx = scale(2)\ny = scale(3, eps=1e-5)\n",
        "def scale(a, size):\n    return a * size + 1e-5\nx = scale(2, 16)\ny = scale(3, size=16)\n",
    ]


def test_a_parameter_that_varies_is_rebound_or_is_not_a_constant_stays():
    assert bound("def f(n):\n    return n\nf(1)\nf(2)\n") == []
    assert bound("def f(n):\n    n = n + 1\n    return n\nf(1)\n") == []
    assert bound("def f(n):\n    return n\nf(k)\n") == []
    assert bound("def f(n):\n    return n\ng = f\nf(1)\n") == []  # a caller we cannot see


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes, _CALLING_PROGRAMS))
def test_bound_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, bind_constant_parameters)


def test_an_unread_parameter_with_a_default_goes_even_where_the_callers_are_unknown():
    code = "def step(tokens, targets=None):\n    return tokens\ncompiled = torch.compile(step, mode='max')\ntrain(compiled)\n"
    assert candidates(code) == ["def step(tokens):\n    return tokens\ncompiled = torch.compile(step, mode='max')\ntrain(compiled)\n"]
    forward = "class M:\n    def forward(self, x, mask=None):\n        return x\n"
    assert candidates(forward) == ["class M:\n    def forward(self, x):\n        return x\n"]
