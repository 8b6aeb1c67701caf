"""operators_to_arithmetic: a torch function's call becomes cheap arithmetic on one of its operands."""

import libcst as cst

from minimizer.source.passes.expressions.arithmetic import operators_to_arithmetic


def candidates(source: str) -> list[str]:
    return [module.code for module in operators_to_arithmetic(cst.parse_module(source))]


def test_each_tensor_operand_of_a_module_function_is_tried_doubled():
    source = "import torch.nn.functional as F\n\ndef f(x, w):\n    y = F.conv2d(x, w, stride=2)\n    return torch.tanh(y), y\n"
    found = candidates(source)
    assert "    y = x * 2\n" in found[0] and "    y = w * 2\n" in found[1]
    assert "torch.tanh" in found[0]
    assert len(found) == 2  # torch.tanh(y) is left alone: torch is not imported here, F is
    with_torch = candidates("import torch\n" + source)
    assert any("    return y * 2, y\n" in text for text in with_torch)


def test_literals_factories_user_functions_and_the_compile_call_are_left_alone():
    source = (
        "import torch\n\nx = torch.ones(2, 3)\nm = torch.compile(f)\ny = helper(x)\ntorch.manual_seed(0)\n"
        "z = torch.add(x + 1, y)\n"
    )
    found = candidates(source)
    assert found == [
        source.replace("torch.add(x + 1, y)", "(x + 1) * 2"),
        source.replace("torch.add(x + 1, y)", "y * 2"),
    ]
