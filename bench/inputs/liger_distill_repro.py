# The 125-token repro of examples/liger_distill.py (H200, 2026-11-27), for bench/plain_costs.py.
import torch
import torch.nn as nn
from liger_kernel.transformers.functional import liger_cross_entropy


def _unpack_saved(saved):
    assert torch.equal(*saved), "a tensor saved for backward was modified in place"
    return saved[0]


torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t.clone()), _unpack_saved).__enter__()
liger_cross_entropy(torch.softmax(nn.Embedding(1, 1).to("cuda")(torch.randint(1, (1,), device="cuda")), -1), torch.randint(1, (1,), device="cuda")).backward()
