"""PLANTED BUG (a stand-in for a compiler bug, not PyTorch's): a house backend whose "gate fusion" pass turns
an addition fed by a sigmoid into a subtraction. Lives beside the program, as a team's compiler wrapper would."""

import operator

import torch


def _fuse_gates(gm: torch.fx.GraphModule) -> torch.fx.GraphModule:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (operator.add, torch.add):
            sources = [a for a in node.args if isinstance(a, torch.fx.Node)]
            if any(s.op == "call_function" and s.target in (torch.sigmoid, torch.nn.functional.sigmoid) for s in sources):
                node.target = operator.sub
    gm.recompile()
    return gm


def house_backend(gm, example_inputs):
    return _fuse_gates(gm).forward
