import libcst as cst

from minimizer.source.passes.structure.autograd_functions import autograd_functions_to_functions

FUNCTION = """import torch


class FusedCrossEntropy(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, targets):
        kernel[(1,)](logits)


FusedCrossEntropy.apply(x, t)
"""


def codes(source):
    return [c.code for c in autograd_functions_to_functions(cst.parse_module(source))]


def test_a_forward_only_function_that_ignores_ctx_becomes_a_plain_function():
    (code,) = codes(FUNCTION)
    assert "def fused_cross_entropy(logits, targets):\n    kernel[(1,)](logits)" in code
    assert code.endswith("fused_cross_entropy(x, t)\n") and "class" not in code


def test_functions_with_a_backward_or_reading_ctx_stay():
    with_backward = FUNCTION.replace(
        "        kernel[(1,)](logits)\n", "        kernel[(1,)](logits)\n\n    @staticmethod\n    def backward(ctx, g):\n        return g, None\n"
    )
    reads_ctx = FUNCTION.replace("kernel[(1,)](logits)", "ctx.save_for_backward(logits)")
    assert codes(with_backward) == [] and codes(reads_ctx) == []
