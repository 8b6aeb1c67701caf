"""The on-device team's backend for diffusion models: AOTAutograd with a fused group norm.

PLANTED BUG (for the corpus): the fused group norm forgets to subtract the group mean before scaling, so
every normalized activation is shifted by its group's mean times the inverse standard deviation.
"""

import torch
from torch._decomp import core_aten_decompositions
from torch._dynamo import register_backend
from torch._dynamo.backends.common import aot_autograd

aten = torch.ops.aten


def _group_norm(input, weight, bias, n, c, hw, groups, eps):
    grouped = input.reshape(n, groups, -1)
    mean = grouped.mean(-1, keepdim=True)
    rstd = torch.rsqrt(grouped.var(-1, keepdim=True, correction=0) + eps)
    out = (grouped * rstd).reshape(input.shape)
    shape = [1, c] + [1] * (input.dim() - 2)
    if weight is not None:
        out = out * weight.reshape(shape)
    if bias is not None:
        out = out + bias.reshape(shape)
    return out, mean.reshape(n, groups), rstd.reshape(n, groups)


def _compile_graph(gm, example_inputs):
    return gm.forward


register_backend(
    name="edge",
    compiler_fn=aot_autograd(
        fw_compiler=_compile_graph,
        bw_compiler=_compile_graph,
        decompositions={**core_aten_decompositions(), aten.native_group_norm.default: _group_norm},
    ),
)
