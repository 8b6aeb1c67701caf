"""PLANTED BUGS: stand-ins for compiler bugs, for testing minimizer.

Nothing here is a real PyTorch bug. Each function below breaks torch.compile on purpose, in a way that depends
on a specific pattern of operators, so that the example scripts fail like real compiler bugs do (wrong
numbers, a crash during compilation, a lost ``requires_grad``) and a good reduction has a known small answer.
They work on CPU and CUDA alike.

- ``plant_miscompile()``: Inductor computes SiLU as ``x * sigmoid(-x)`` (a dropped negation): wrong numbers.
- ``plant_crash()``: Inductor refuses to compile softmax's ``amax -> sub`` (a RuntimeError at compile time).
- ``planted_backend``: a torch.compile backend that runs graphs containing sliced assignment under no_grad.
"""

from __future__ import annotations

import operator

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


class _PlantedPass(CustomGraphPass):
    """A post-grad Inductor pass whose ``uuid`` hashes this file.

    It is installed as ``post_grad_custom_pre_pass``, which runs before Inductor's own pattern passes: on CUDA
    those rewrite softmax's ``amax`` into an online-softmax prim, and the planted patterns must look the same
    on every device.

    Inductor folds the uuid into its FX-graph cache key, so a cached kernel compiled with (or without) the
    planted bug is never reused for the other case, and editing this file invalidates the cache.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()


class _SiluDropsNegation(_PlantedPass):
    """Rewrites SiLU's post-grad decomposition ``x / (1 + exp(-x))`` into ``x / (1 + exp(x))``."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        for div in list(graph.nodes):
            if div.target != aten.div.Tensor:
                continue
            x, denominator = div.args
            if getattr(denominator, "target", None) != aten.add.Tensor or denominator.args[1] != 1:
                continue
            exp = denominator.args[0]
            if getattr(exp, "target", None) != aten.exp.default:
                continue
            neg = exp.args[0]
            if getattr(neg, "target", None) != aten.neg.default or neg.args[0] is not x:
                continue
            exp.replace_input_with(neg, x)
        graph.eliminate_dead_code()


class _AmaxSubCrash(_PlantedPass):
    """Raises when an ``amax`` feeds a ``sub``, as softmax's and log_softmax's decompositions do."""

    def __call__(self, graph: torch.fx.Graph) -> None:
        for node in graph.nodes:
            if node.target == aten.amax.default and any(user.target == aten.sub.Tensor for user in node.users):
                raise RuntimeError("planted inductor bug: cannot lower amax feeding sub")


def plant_miscompile() -> None:
    """Make Inductor miscompile SiLU (``F.silu``, ``nn.SiLU``) for the rest of this process: wrong numbers."""

    inductor_config.post_grad_custom_pre_pass = _SiluDropsNegation()


def plant_crash() -> None:
    """Make Inductor fail to compile softmax (``amax`` feeding ``sub``) for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _AmaxSubCrash()


def _assigns_in_place(gm: torch.fx.GraphModule) -> bool:
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in (operator.setitem, torch.Tensor.copy_, torch.Tensor.index_put_):
            return True
        if node.op == "call_method" and node.target in ("copy_", "index_put_", "__setitem__"):
            return True
    return False


def planted_backend(gm: torch.fx.GraphModule, example_inputs):
    """A torch.compile backend that loses ``requires_grad`` when the graph assigns into a slice of a tensor.

    Use as ``torch.compile(model, backend=planted_backend)``. Graphs without sliced/indexed assignment run
    unchanged; graphs with one run under ``torch.no_grad()``, so their outputs come back detached.
    """

    if not _assigns_in_place(gm):
        return gm.forward

    def run_without_grad(*args):
        with torch.no_grad():
            return gm.forward(*args)

    return run_without_grad
