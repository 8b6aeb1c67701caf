# Hand-minimal repro of ../planted_miscompile.py: the yardstick for the size of minimizer's output.
import torch
from _planted import plant_miscompile

plant_miscompile()
f = torch.nn.functional.silu
x = torch.randn(4)
compiled_out = torch.compile(f)(x)
eager_out = f(x)
assert torch.allclose(compiled_out, eager_out, atol=1e-4), "compiled output differs from eager"
