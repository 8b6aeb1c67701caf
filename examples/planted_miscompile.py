"""A transformer-style block whose compiled output differs from eager (a PLANTED Inductor bug).

``plant_miscompile()`` (see _planted.py) makes Inductor compute SiLU as x * sigmoid(-x). Nothing raises: the
compiled block just returns different numbers, which the assert at the end catches. The smallest repro is a
compiled ``F.silu`` alone; everything else here (attention, norms, residuals) is noise for minimizer to remove.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
plant_miscompile()


class Block(nn.Module):
    def __init__(self, dim=32, heads=4):
        super().__init__()
        self.heads = heads
        self.norm1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.norm2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 4 * dim)
        self.down = nn.Linear(4 * dim, dim)
        self.dropout = nn.Dropout(p=0.0)

    def attention(self, x):
        batch, seq, dim = x.shape
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q = q.view(batch, seq, self.heads, -1).transpose(1, 2)
        k = k.view(batch, seq, self.heads, -1).transpose(1, 2)
        v = v.view(batch, seq, self.heads, -1).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / (q.shape[-1] ** 0.5)
        weights = torch.softmax(scores, dim=-1)
        out = torch.matmul(weights, v).transpose(1, 2).reshape(batch, seq, dim)
        return self.proj(out)

    def forward(self, x):
        x = x + self.dropout(self.attention(self.norm1(x)))
        hidden = F.silu(self.up(self.norm2(x)))
        x = x + self.dropout(self.down(hidden))
        return torch.tanh(x) * 2.0


model = Block().to(device)
x = torch.randn(2, 8, 32, device=device)

compiled_out = torch.compile(model)(x)
eager_out = model(x)
print("max abs difference:", (compiled_out - eager_out).abs().max().item())
assert torch.allclose(compiled_out, eager_out, atol=1e-4), "compiled output differs from eager"
