"""The inference team's mixture-of-experts backend: routes through its own top-k kernel.

PLANTED BUG (for the corpus): the lowering of ``torch.topk`` is unfinished and raises at compile time, so any
graph that routes tokens to experts fails to compile.
"""

import torch
from torch._dynamo import register_backend


def _lower(node):
    if node.op == "call_function" and node.target is torch.topk:
        raise NotImplementedError("moe backend: no lowering for topk over a non-contiguous expert axis")


@register_backend
def moe(gm, example_inputs):
    for node in gm.graph.nodes:
        _lower(node)
    return gm.forward
