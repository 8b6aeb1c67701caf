"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_miscompile()`` installs a post-grad Inductor pass that computes
sigmoid's derivative ``s * (1 - s)`` as ``s * (s + 1)`` (a flipped sign): the forward is right, gradients
through ``torch.sigmoid`` (``nn.Sigmoid``, ``F.sigmoid``) are wrong. It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


def _is_sigmoid(node) -> bool:
    """A sigmoid computed in this graph, or (in a backward graph) the forward's sigmoid saved for it."""
    if getattr(node, "target", None) == aten.sigmoid.default:
        return True
    return getattr(node, "op", None) == "placeholder" and node.name.startswith("sigmoid")


class _SigmoidBackwardSign(CustomGraphPass):
    """Rewrites ``mul(s, sub(1, s))`` (sigmoid_backward's decomposition) into ``mul(s, sub(s, -1))``.

    Its ``uuid`` hashes this file, which Inductor folds into its FX-graph cache key.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for mul in graph.nodes:
            if mul.target != aten.mul.Tensor:
                continue
            s, sub = mul.args
            if not (_is_sigmoid(s) and getattr(sub, "target", None) == aten.sub.Tensor and sub.args == (1, s)):
                continue
            if all(user.target == aten.mul.Tensor and s in user.args for user in sub.users):
                sub.args = (s, -1)


def plant_miscompile() -> None:
    """Make Inductor's gradient of sigmoid wrong for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _SigmoidBackwardSign()
