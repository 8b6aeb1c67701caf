"""PLANTED BUG: a stand-in for a compiler bug, for testing minimizer.

Nothing here is a real PyTorch bug. ``plant_miscompile()`` installs a post-grad Inductor pass that computes
``expm1(x)`` as ``exp(x)`` (the ``- 1`` lost): ELU, SELU and CELU come out shifted by up to alpha on their
negative side. It works on CPU and CUDA alike.
"""

from __future__ import annotations

import torch
import torch._inductor.config as inductor_config
from torch._inductor.custom_graph_pass import CustomGraphPass, get_hash_for_files

aten = torch.ops.aten


class _Expm1AsExp(CustomGraphPass):
    """Retargets every ``aten.expm1`` node to ``aten.exp``.

    Its ``uuid`` hashes this file, which Inductor folds into its FX-graph cache key.
    """

    def uuid(self):
        return get_hash_for_files((__file__,)) + type(self).__name__.encode()

    def __call__(self, graph: torch.fx.Graph) -> None:
        for node in graph.nodes:
            if node.target == aten.expm1.default:
                node.target = aten.exp.default


def plant_miscompile() -> None:
    """Make Inductor's expm1 (ELU's negative side) wrong for the rest of this process."""

    inductor_config.post_grad_custom_pre_pass = _Expm1AsExp()
