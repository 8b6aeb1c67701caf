# Minimized by minimizer 0.1.0 from liger_distill.py
# torch 2.11.0+cu130 on cuda (NVIDIA H200); oracle: inplace
# signature: inplace: SoftmaxBackward0
# size: 1007 -> 149 tokens, 97 -> 10 lines, 38 -> 10 torch ops
# work: 318 oracle calls (128 cache hits), 363 s

import torch
import torch.nn as nn
from liger_kernel.transformers.functional import liger_cross_entropy


def _unpack_saved(saved):
    tensor, snapshot, version = saved
    assert tensor._version != version or torch.equal(tensor, snapshot), "a tensor saved for backward was modified in place"
    return tensor


torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t.detach().clone(), t._version), _unpack_saved).__enter__()
device = "cuda"
liger_cross_entropy(torch.softmax(nn.Embedding(1, 1).to(device)(torch.randint(1, (1,), device=device)), dim=-1), torch.randint(1, (1,), device=device)).backward()
