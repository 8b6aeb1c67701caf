"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_miscompile()`` installs a post-grad Inductor pass that rewrites
tanh's derivative ``1 - tanh(x) * tanh(x)`` into ``1 - tanh(x)`` (a dropped square): the forward is right,
gradients through ``torch.tanh`` (``nn.Tanh``, ``F.tanh``) are wrong. It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


def _is_tanh(node) -> bool:
    """A tanh computed in this graph, or (in a backward graph) the forward's tanh saved for it."""
    if getattr(node, "target", None) == aten.tanh.default:
        return True
    return getattr(node, "op", None) == "placeholder" and node.name.startswith("tanh")


class _TanhBackwardDropsSquare(CustomGraphPass):
    """Rewrites ``sub(1, mul(t, t))`` with ``t = tanh(x)`` (tanh_backward's decomposition) into ``sub(1, t)``.

    Its ``uuid`` hashes this file: Inductor folds it into its FX-graph cache key, so a graph compiled with the
    planted bug is never reused without it.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for sub in list(graph.nodes):
            if sub.target != aten.sub.Tensor or sub.args[0] != 1:
                continue
            square = sub.args[1]
            if getattr(square, "target", None) != aten.mul.Tensor:
                continue
            a, b = square.args
            if a is b and _is_tanh(a):
                sub.replace_input_with(square, a)
        graph.eliminate_dead_code()


def plant_miscompile() -> None:
    """Make Inductor's gradient of tanh wrong for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _TanhBackwardDropsSquare()
