import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.expressions.bypass import bypass_attributes, bypass_operators
from minimizer.source.passes.structure.layers import remove_layers
from tests.source.helpers import (
    check_candidates_are_valid_and_not_larger,
    greedy_reduce,
    module_classes,
    runs_and,
    snippets,
)


def bypasses(code: str) -> list[str]:
    return [candidate.code for candidate in bypass_operators(cst.parse_module(code))]


def layer_removals(code: str) -> list[str]:
    return [candidate.code for candidate in remove_layers(cst.parse_module(code))]


def test_function_call_becomes_its_argument():
    assert bypasses("import torch\ny = torch.relu(x)\n") == ["import torch\ny = x\n"]


def test_method_call_becomes_receiver_then_arguments():
    assert bypasses("y = x.add(z, alpha=w)\n") == ["y = x\n", "y = z\n", "y = w\n"]


def test_binary_operation_becomes_either_side():
    assert bypasses("y = a + b\n") == ["y = a\n", "y = b\n"]


def test_literals_self_and_module_receivers_are_not_operands():
    assert bypasses("import torch.nn.functional as F\ny = F.pad(x, (1, 1)) * 2\n") == [
        "import torch.nn.functional as F\ny = F.pad(x, (1, 1))\n",
        "import torch.nn.functional as F\ny = x * 2\n",
    ]
    assert bypasses("y = self.layer(3)\n") == []


def test_outer_operations_come_first():
    found = bypasses("y = f(g(x))\n")
    assert found == ["y = g(x)\n", "y = f(x)\n"]


def test_compile_calls_and_decorators_are_skipped():
    code = "import torch\n@torch.compile(backend=b)\ndef f(x):\n    pass\ng = torch.compile(model)\n"
    assert bypasses(code) == []


def test_replacement_keeps_precedence():
    assert "y = (a + b) * c\n" in bypasses("y = f(a + b) * c\n")


LAYERED = """\
class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = nn.Linear(2, 2)
        self.b = nn.Sequential(nn.ReLU(), nn.Tanh())
        self.c = nn.Linear(2, 2)
    def forward(self, x):
        x = self.a(x)
        return self.b(x) + self.c.weight
"""


def test_remove_layer_drops_assignment_and_calls():
    found = layer_removals(LAYERED)
    assert found[0] == LAYERED.replace("        self.a = nn.Linear(2, 2)\n", "").replace("        x = self.a(x)\n", "")
    assert found[1] == LAYERED.replace(
        "        self.b = nn.Sequential(nn.ReLU(), nn.Tanh())\n", ""
    ).replace("self.b(x)", "x")


def test_remove_layer_drops_sequential_elements_and_skips_non_call_uses():
    found = layer_removals(LAYERED)
    assert found[2:] == [
        LAYERED.replace("nn.Sequential(nn.ReLU(), nn.Tanh())", "nn.Sequential(nn.Tanh())"),
        LAYERED.replace("nn.Sequential(nn.ReLU(), nn.Tanh())", "nn.Sequential(nn.ReLU())"),
    ]


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes))
def test_bypass_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, bypass_operators)


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes))
def test_layer_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, remove_layers)


def test_greedy_bypass_strips_operations_around_the_interesting_value():
    code = "def double(v):\n    return v * 2\nx = 5\nresult = abs(double(x) - 4) + 0\n"
    # Interesting: `result` is even, which needs `double` but none of the arithmetic around it.
    reduced = greedy_reduce(code, bypass_operators, runs_and(lambda namespace: namespace["result"] % 2 == 0))
    assert reduced == "def double(v):\n    return v * 2\nx = 5\nresult = double(x)\n"


def test_greedy_layer_removal_keeps_only_the_needed_layer():
    code = """\
class Add:
    def __init__(self, k):
        self.k = k
    def __call__(self, v):
        return v + self.k
class Net:
    def __init__(self):
        self.first = Add(1)
        self.second = Add(10)
        self.third = Add(100)
    def forward(self, x):
        x = self.first(x)
        x = self.second(x)
        return self.third(x)
result = Net().forward(0)
"""
    # Interesting: the tens digit shows that the second layer still ran.
    interesting = runs_and(lambda namespace: namespace["result"] // 10 % 10 == 1)
    reduced = greedy_reduce(code, remove_layers, interesting)
    assert "self.first" not in reduced and "self.third" not in reduced
    assert "        x = self.second(x)\n        return x\n" in reduced


def attribute_bypasses(code: str) -> list[str]:
    return [candidate.code for candidate in bypass_attributes(cst.parse_module(code))]


def test_tensor_attributes_become_their_receiver_outer_first():
    assert attribute_bypasses("y = (a + b).T.mT @ w.data\n") == [
        "y = (a + b).T @ w.data\n",
        "y = (a + b).mT @ w.data\n",
        "y = (a + b).T.mT @ w\n",
    ]
    assert attribute_bypasses("return_value = skew(v).H.real\n") == ["return_value = skew(v).H\n", "return_value = skew(v).real\n"]


def test_a_field_of_a_method_result_becomes_the_receiver():
    assert attribute_bypasses("target = q.max(dim=-1).values\n") == ["target = q\n"]
    # A method called on the result is bypass_operators' (`x.float().sum()`), an imported module's never.
    assert attribute_bypasses("y = x.float().sum()\nz = np.zeros(3).shape\nimport numpy as np\n") == []


def test_stores_module_attributes_and_other_attributes_are_left_alone():
    assert attribute_bypasses("import numpy as np\np.data = np.real\ndel q.T\ny = x.grad + x.shape\n") == []


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, st.sampled_from(["y = x.T @ z.mT\n", "p.data = q.data.real\n", "w = f(x).H[0].T\n"])))
def test_attribute_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, bypass_attributes)


def test_greedy_attribute_bypass_keeps_the_needed_attribute():
    code = "z = complex(3, 4)\nresult = z.real.real + abs(z.conjugate().real)\n"
    reduced = greedy_reduce(code, bypass_attributes, runs_and(lambda namespace: namespace["result"] == 6.0))
    assert reduced == "z = complex(3, 4)\nresult = z.real + abs(z.conjugate().real)\n"


def test_a_conditional_expression_becomes_either_branch():
    import ast

    found = [ast.dump(ast.parse(c.code)) for c in bypass_operators(cst.parse_module("y = x if torch.is_tensor(x) else 0\n"))]
    assert found[:2] == [ast.dump(ast.parse("y = x\n")), ast.dump(ast.parse("y = 0\n"))]


def test_a_layer_bound_to_a_name_goes_from_every_call_at_once():
    from minimizer.source.passes.structure.layers import remove_named_layers

    code = (
        "import torch.nn as nn\nhead = nn.Linear(2, 1)\nblocks = Block()\nfused = head(blocks(x))\n"
        "blocks.fused = False\nassert torch.allclose(fused, head(blocks(x)))\n"
    )
    (candidate,) = [c.code for c in remove_named_layers(cst.parse_module(code))]  # `blocks` is read otherwise too
    assert candidate == (
        "import torch.nn as nn\nblocks = Block()\nfused = blocks(x)\nblocks.fused = False\n"
        "assert torch.allclose(fused, blocks(x))\n"
    )
    # Bound twice, or a name an import binds: which calls are the layer's is not plain.
    assert list(remove_named_layers(cst.parse_module("head = nn.Linear(2, 1)\nhead = g()\ny = head(x)\n"))) == []
    check_candidates_are_valid_and_not_larger(code, remove_named_layers)
