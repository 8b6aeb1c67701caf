"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_miscompile()`` installs a post-grad Inductor pass that turns every
population variance (``var_mean`` with ``correction=0``, as layer norm and group norm decompose into) into the
sample variance (``correction=1``): normalisation layers come out slightly off, by a factor of about
sqrt((n - 1) / n). It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


class _VarianceCorrection(CustomGraphPass):
    """Rewrites ``var_mean(x, dims, correction=0)`` into ``var_mean(x, dims, correction=1)``.

    Its ``uuid`` hashes this file, which Inductor folds into its FX-graph cache key.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for node in graph.nodes:
            if node.target == aten.var_mean.correction and node.kwargs.get("correction") == 0:
                node.kwargs = {**node.kwargs, "correction": 1}


def plant_miscompile() -> None:
    """Make Inductor's population variance (layer norm, group norm) unbiased for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _VarianceCorrection()
