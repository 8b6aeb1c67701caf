"""A small classifier that runs eagerly but crashes under torch.compile (a PLANTED Inductor bug).

``plant_crash()`` (see _planted.py) makes Inductor refuse to compile an ``amax`` that feeds a ``sub``, which
softmax's decomposition contains. Compiling raises torch._dynamo.exc.BackendCompilerFailed wrapping
"RuntimeError: planted inductor bug: cannot lower amax feeding sub". The smallest repro is a compiled softmax
alone; the convolution, norms, pooling and attention pooling are noise for minimizer to remove.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_crash

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
plant_crash()


class Classifier(nn.Module):
    def __init__(self, channels=8, dim=32, classes=10):
        super().__init__()
        self.conv = nn.Conv1d(1, channels, kernel_size=3, padding=1)
        self.norm = nn.BatchNorm1d(channels)
        self.embed = nn.Linear(channels, dim)
        self.score = nn.Linear(dim, 1)
        self.head = nn.Linear(dim, classes)
        self.ln = nn.LayerNorm(dim)

    def forward(self, signal):
        h = F.relu(self.norm(self.conv(signal.unsqueeze(1))))
        h = F.max_pool1d(h, kernel_size=2).transpose(1, 2)
        h = self.ln(F.gelu(self.embed(h)))
        # Attention pooling over time: the softmax the planted bug trips on.
        weights = torch.softmax(self.score(h).squeeze(-1), dim=-1)
        pooled = torch.einsum("bt,btd->bd", weights, h)
        logits = self.head(torch.sigmoid(pooled) + pooled.mean(dim=-1, keepdim=True))
        return logits.clamp(-10.0, 10.0)


model = Classifier().to(device).eval()
signal = torch.randn(4, 32, device=device)

eager_out = model(signal)
compiled_out = torch.compile(model)(signal)
print("compiled output matches eager:", torch.allclose(compiled_out, eager_out, atol=1e-4))
