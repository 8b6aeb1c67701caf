"""Candidates of the passes added for the corpus compile and never grow, on generated scripts."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.signatures.arguments import keywords_to_positional
from minimizer.source.passes.values.constants import fold_integer_arithmetic
from minimizer.source.passes.kernels.memory import constant_kernel_loads
from minimizer.source.passes.names.known_shapes import fold_known_shapes
from minimizer.source.passes.expressions.leaves import layers_to_leaves
from minimizer.source.passes.values.factories import constant_tensors_to_factories, literal_tensors_to_draws
from minimizer.source.passes.values.random_inputs import random_inputs_to_ones
from minimizer.source.passes.signatures.returns import drop_unread_returned_values
from tests.source.helpers import check_candidates_are_valid_and_not_larger, snippets

_EXTRA = st.sampled_from(
    [
        "import torch\nfrom torch import nn\nlin = nn.Linear(2, 2)\nx = torch.randn(2, 2)\nrows, cols = x.shape\ny = lin(x)[rows]\n",
        "def f(x):\n    return x, x * 2\n\n\na, b = torch.compile(f)(torch.rand(1))\nprint(b.sum(dim=0))\n",
        "q = g(nn.Conv2d(1, 1, 1)(torch.randn(1, 1, 1)), k=torch.randn_like(z))\n",
        "r = torch.randint(-10, -10 + 1, (2 * 3,)) + (1 + 2).bit_length()\n",
        "x = torch.tensor([[1.0, 1.0], [1.0, 1.0]]) + torch.full((2,), 0.0) + torch.tensor(-1.5)\n",
        "p = torch.tensor([[3.5, -1.25], [0.5, 2.0]]) % torch.tensor([0, 1, 2, 3]) + torch.tensor([9, -2, 4, 4])\n",
        "@triton.jit\ndef k(p):\n    tl.store(p, tl.load(p + 1) * tl.load(p))\n",
    ]
)


@pytest.mark.parametrize(
    "reduction_pass",
    [
        layers_to_leaves,
        random_inputs_to_ones,
        constant_tensors_to_factories,
        literal_tensors_to_draws,
        fold_known_shapes,
        drop_unread_returned_values,
        keywords_to_positional,
        fold_integer_arithmetic,
        constant_kernel_loads,
    ],
)
@settings(max_examples=20, deadline=None)
@given(code=st.one_of(snippets, _EXTRA, st.tuples(snippets, _EXTRA).map("".join)))
def test_candidates_compile_and_never_grow(reduction_pass, code):
    check_candidates_are_valid_and_not_larger(code, reduction_pass)
