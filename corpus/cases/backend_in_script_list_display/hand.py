import torch
import torch.nn.functional as F


def cheap_gelu(x, approximate):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * x))


def optimise(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.target is torch._C._nn.gelu:
            node.target = cheap_gelu
    gm.recompile()
    return gm.forward


x = torch.ones(1)
assert torch.allclose(torch.compile(F.gelu, backend=optimise)(x, approximate="tanh"), F.gelu(x, approximate="tanh"))
