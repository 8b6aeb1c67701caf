# Minimized by minimizer 0.1.0 from liger_distill.py
# torch 2.11.0+cu130 on cuda (NVIDIA H100 80GB HBM3); oracle: inplace
# signature: inplace: SoftmaxBackward0
# size: 1007 -> 125 tokens, 97 -> 8 lines, 38 -> 9 torch ops
# work: 340 oracle calls (156 cache hits), 228 s

import torch
import torch.nn as nn
from liger_kernel.transformers.functional import liger_cross_entropy


def _unpack_saved(saved):
    assert torch.equal(*saved), "a tensor saved for backward was modified in place"
    return saved[0]


torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t.clone()), _unpack_saved).__enter__()
liger_cross_entropy(torch.softmax(nn.Embedding(1, 1).to("cuda")(torch.randint(1, (1,), device="cuda")), -1), torch.randint(1, (1,), device="cuda")).backward()
