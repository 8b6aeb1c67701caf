import torch
import torch.nn.functional as F


def backend(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.target is F.silu:
            node.target = lambda x, inplace=False: x * F.hardsigmoid(x)
    gm.recompile()
    return gm.forward


x = torch.ones(1)
assert torch.allclose(torch.compile(F.silu, backend=backend)(x), F.silu(x))
