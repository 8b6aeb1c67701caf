import torch
import torch.nn.functional as F


def blocked_softmax(x, dim):
    e = torch.exp(x)
    return torch.cat([e[..., :4] / e.sum(-1, keepdim=True), e[..., 4:] / e[..., 4:].sum(-1, keepdim=True)], -1)


def vectorised(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.target is F.softmax:
            node.target = blocked_softmax
    gm.recompile()
    return gm.forward


x = torch.zeros(6)
assert torch.allclose(torch.compile(F.softmax, backend=vectorised)(x, -1), F.softmax(x, -1))
