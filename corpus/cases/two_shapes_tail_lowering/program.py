"""Token classification over variable-length batches, with a vectorising backend of our own.

``vectorised`` lowers softmax to a kernel that works on blocks of four columns and a tail; the model is compiled
once and serves two batch shapes: the first (eight classes) fills whole blocks, the second (six) has a tail.
The check compares every served batch with eager.

The planted bug: the tail is normalised by the sum over its own columns instead of the whole row.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F


def blocked_softmax(x, dim=-1, _stacklevel=3, dtype=None):
    e = torch.exp(x - x.amax(dim=-1, keepdim=True))
    whole = e.shape[-1] // 4 * 4
    head = e[..., :whole] / e.sum(dim=-1, keepdim=True)
    tail = e[..., whole:] / e[..., whole:].sum(dim=-1, keepdim=True)
    return torch.cat([head, tail], dim=-1)


def vectorised(gm, example_inputs):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is F.softmax:
            node.target = blocked_softmax
    gm.recompile()
    return gm.forward


class Tagger(nn.Module):
    def __init__(self, width=6):
        super().__init__()
        self.proj = nn.Linear(width, width)

    def forward(self, x, classes):
        logits = self.proj(x)[..., :1].expand(*x.shape[:-1], classes) * torch.linspace(0.5, 1.5, classes)
        return F.softmax(logits, dim=-1)


def serve(model, requests):
    return [(classes, model(x, classes)) for x, classes in requests]


def main():
    torch.manual_seed(0)
    model = Tagger()
    compiled = torch.compile(model, backend=vectorised, dynamic=False)
    requests = [(torch.randn(2, 3, 6), 8), (torch.randn(2, 3, 6), 6)]
    with torch.no_grad():
        for (classes, got), (_, want) in zip(serve(compiled, requests), serve(model, requests)):
            assert torch.allclose(got, want, atol=1e-5), f"{classes} classes: compiled probabilities differ"


if __name__ == "__main__":
    main()
