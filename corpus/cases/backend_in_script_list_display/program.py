"""A tiny language model's logits under a two-pass graph optimiser of our own.

``optimise`` runs two FX passes over the graph Dynamo hands it (fold a scale into the matmul, replace
``tanh``-approximated GELU by a cheaper polynomial) and runs the result. The evaluation gathers compiled and
eager logits side by side in a list and checks every pair.

The planted bug: the polynomial drops the cubic term.
"""

import logging

import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("lm")


def fold_scales(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch.mul and node.args[1] == 1.0:
            node.replace_all_uses_with(node.args[0])
            gm.graph.erase_node(node)
    return gm


def cheap_gelu(x, approximate="tanh"):
    return 0.5 * x * (1.0 + torch.tanh(0.7978845608 * x))


def replace_gelu(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target is torch._C._nn.gelu:
            node.target = cheap_gelu
    return gm


def optimise(gm, example_inputs):
    for graph_pass in (fold_scales, replace_gelu):
        gm = graph_pass(gm)
    gm.recompile()
    return gm.forward


class TinyLM(nn.Module):
    def __init__(self, vocab=16, width=8):
        super().__init__()
        self.embed = nn.Embedding(vocab, width)
        self.up = nn.Linear(width, 2 * width)
        self.down = nn.Linear(2 * width, width)
        self.norm = nn.LayerNorm(width)

    def forward(self, tokens):
        h = self.embed(tokens)
        h = h + self.down(F.gelu(self.up(h), approximate="tanh"))
        return self.norm(h) @ self.embed.weight.T


def main():
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    model = TinyLM().eval()
    compiled = torch.compile(model, backend=optimise)
    prompts = [torch.randint(0, 16, (1, 6)) for _ in range(2)]
    with torch.no_grad():
        pairs = [[compiled(tokens), model(tokens)] for tokens in prompts]
    for index, (got, want) in enumerate(pairs):
        torch.testing.assert_close(got, want, msg=f"prompt {index}: compiled logits differ")
    log.warning("all prompts agree")


if __name__ == "__main__":
    main()
