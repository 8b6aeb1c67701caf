# Hand-minimal repro of ../planted_miscompile_training.py: the yardstick for the size of minimizer's output.
import torch
from _planted import plant_miscompile

plant_miscompile()
f = torch.nn.functional.silu
x = torch.randn(4)
compiled_losses = torch.compile(f)(x)
eager_losses = f(x)
assert torch.allclose(compiled_losses, eager_losses), "compiled training diverges from eager"
