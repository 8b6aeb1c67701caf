"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_miscompile()`` installs a post-grad Inductor pass that lowers
softplus's linear-regime threshold from 20 to 2: ``softplus(x)`` comes out as ``x`` for every x above 2, off by
``log1p(exp(-x))`` (about 0.13 at x = 2). Only the forward is wrong. It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


class _SoftplusThreshold(CustomGraphPass):
    """Rewrites ``where(x > 20, x, log1p(exp(x)))`` (softplus's decomposition, divided by
    beta where beta is given) into ``where(x > 2, ...)``.

    Its ``uuid`` hashes this file, which Inductor folds into its FX-graph cache key.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for where in graph.nodes:
            if where.target != aten.where.self:
                continue
            gt, _, soft = where.args
            if getattr(soft, "target", None) == aten.div.Tensor:  # log1p(exp(beta * x)) / beta
                soft = soft.args[0]
            if getattr(gt, "target", None) != aten.gt.Scalar or getattr(soft, "target", None) != aten.log1p.default:
                continue
            x, threshold = gt.args
            gt.args = (x, threshold / 10)


def plant_miscompile() -> None:
    """Make Inductor's softplus wrong above 2 for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _SoftplusThreshold()
