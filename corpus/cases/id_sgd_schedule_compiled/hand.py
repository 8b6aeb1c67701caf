import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.tensor([0.0, 1.0])
if (torch.compile(F.layer_norm)(x, [2]) - F.layer_norm(x, [2])).abs().max() > 1e-3:
    raise RuntimeError("compiled layer_norm diverged from eager")
