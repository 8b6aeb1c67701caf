import math

import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = -torch.ones(1)
assert math.isclose(torch.compile(F.elu)(x).item(), F.elu(x).item())
