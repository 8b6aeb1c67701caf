"""A model from a library, compiled, returns wrong numbers (a PLANTED Inductor bug, see _planted.py).

Every layer lives in ``library_model``; this script only builds, compiles and compares. A source reducer can
only cut these few lines; the graph reducer (``--reducer graph``) works on the graph torch.compile captures.
"""

import torch

from _planted import plant_miscompile
from library_model import TinyTransformer

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"
plant_miscompile()

model = TinyTransformer().to(device)
tokens = torch.randint(0, 50, (2, 12), device=device)

compiled_out = torch.compile(model)(tokens)
eager_out = model(tokens)
print("max abs difference:", (compiled_out - eager_out).abs().max().item())
assert torch.allclose(compiled_out, eager_out, atol=1e-4), "compiled output differs from eager"
