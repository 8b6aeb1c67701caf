"""The team's deployment backend: AOTAutograd with decompositions tuned for the serving runtime.

PLANTED BUG (for the corpus): layer norm's variance is taken with Bessel's correction (divided by n - 1),
so every normalized value comes out too small by a factor of sqrt((n - 1) / n).
"""

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo import register_backend
from torch._dynamo.backends.common import aot_autograd

aten = torch.ops.aten


def _layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(input.dim() - len(normalized_shape), input.dim()))
    mean = input.mean(dims, keepdim=True)
    rstd = torch.rsqrt(input.var(dims, keepdim=True, correction=1) + eps)
    out = (input - mean) * rstd
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out, mean, rstd


def _compile_graph(gm, example_inputs):
    return gm.forward


register_backend(
    name="deploy",
    compiler_fn=aot_autograd(
        fw_compiler=_compile_graph,
        bw_compiler=_compile_graph,
        decompositions={**core_aten_decompositions(), aten.native_layer_norm.default: _layer_norm},
    ),
)
