import torch


def accel_backend(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.target == torch._C._nn.gelu:
            node.target = fast_gelu
    gm.recompile()
    return gm.forward


def fast_gelu(x):
    return x * torch.sigmoid(1.702 * x)


x = torch.ones(1)
assert torch.allclose(torch.compile(torch.nn.functional.gelu, backend=accel_backend)(x), torch.nn.functional.gelu(x))
