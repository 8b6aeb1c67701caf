"""A feature pipeline keeps its compiled stages in a dictionary and runs them by name.

``Pipeline`` compiles each stage function once (Inductor) into ``self.stages``; ``run`` looks them up by the
names a recipe lists. The check compares the pipeline with the same recipe run eagerly and collects the stages
that disagree into a metrics dict.
"""

import json
import sys

import torch
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


def normalise(x):
    return (x - x.mean(dim=-1, keepdim=True)) / (x.std(dim=-1, keepdim=True) + 1e-5)


def gate(x):
    return F.silu(x) * torch.sigmoid(x)


def pool(x):
    return x.mean(dim=0)


STAGES = {"normalise": normalise, "gate": gate, "pool": pool}


class Pipeline:
    def __init__(self, compiled=True):
        self.stages = {name: torch.compile(fn) if compiled else fn for name, fn in STAGES.items()}

    def run(self, recipe, x):
        outputs = {}
        for name in recipe:
            x = self.stages[name](x)
            outputs[name] = x
        return outputs


def main():
    torch.manual_seed(0)
    recipe = ["normalise", "gate", "pool"]
    x = torch.randn(4, 5)
    got, want = Pipeline().run(recipe, x), Pipeline(compiled=False).run(recipe, x)
    metrics = {name: (got[name] - want[name]).abs().max().item() for name in recipe}
    print(json.dumps(metrics))
    if max(metrics.values()) > 1e-4:
        sys.exit(1)


if __name__ == "__main__":
    main()
