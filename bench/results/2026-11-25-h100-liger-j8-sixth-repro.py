# Minimized by minimizer 0.1.0 from liger_distill.py
# torch 2.11.0+cu130 on cuda (NVIDIA H100 80GB HBM3); oracle: inplace
# signature: inplace: SoftmaxBackward0
# size: 1007 -> 393 tokens, 97 -> 43 lines, 38 -> 14 torch ops
# work: 202 oracle calls (85 cache hits), 332 s

from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from liger_kernel.transformers.functional import liger_cross_entropy


def _unpack_saved(saved):
    tensor, snapshot, version = saved
    assert tensor._version != version or torch.equal(tensor, snapshot), "a tensor saved for backward was modified in place"
    return tensor


torch.autograd.graph.saved_tensors_hooks(lambda t: (t, t.detach().clone(), t._version), _unpack_saved).__enter__()


@dataclass
class StudentConfig:
    steps: int = 1


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm2 = nn.LayerNorm(128)

    def forward(self, x):
        return x


class Student(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(512, 128)
        self.pos = nn.Parameter()
        self.blocks = (Block() for _ in range(2))
        self.head = nn.Linear(128, 512)

    def forward(self, tokens):
        x = self.embed(tokens)
        for block in self.blocks:
            x = x
        return self.head(x)


def gradients(model, tokens, targets, loss_fn):
    logits = model(tokens)
    temperature = 2.0
    probs = torch.softmax(logits, dim=-1)
    loss = loss_fn(probs.view(-1, probs.shape[-1]), targets)
    loss.backward()
    return loss, {name: p.grad for name, p in model}


device = "cuda"
student = Student().to(device)
tokens = torch.randint(0, 512, (8, 64), device=device)
teacher_labels = torch.randint(0, 512, (8, 64), device=device)
loss, fused = gradients(student, tokens, teacher_labels, liger_cross_entropy)
