import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.full((1,), 3.0, device="cuda")
if (torch.compile(F.softplus)(x) - F.softplus(x)).abs().max() > 1e-3:
    raise RuntimeError("compiled softplus diverged from eager")
