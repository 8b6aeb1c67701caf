"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_crash()`` installs a post-grad Inductor pass that refuses to
compile a cumulative sum over any dimension but the last (a RuntimeError at compile time), as a scan lowering
with a missing case would. It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


class _OuterScanCrash(CustomGraphPass):
    """Raises on ``aten.cumsum`` over a dimension other than the innermost one.

    Its ``uuid`` hashes this file, which Inductor folds into its FX-graph cache key.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for node in graph.nodes:
            if node.target != aten.cumsum.default:
                continue
            source, dim = node.args[0], node.args[1]
            rank = len(source.meta["val"].shape)
            if rank > 1 and dim % rank != rank - 1:
                raise RuntimeError(f"planted inductor bug: no scan lowering for cumsum over dim {dim} of a rank-{rank} tensor")


def plant_crash() -> None:
    """Make Inductor fail to compile ``cumsum`` over an outer dimension for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _OuterScanCrash()
