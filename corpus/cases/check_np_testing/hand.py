import numpy as np
import torch
import torch.nn.functional as F

from _planted import plant_miscompile

plant_miscompile()
x = torch.ones(1)
np.testing.assert_allclose(torch.compile(F.silu)(x).numpy(), F.silu(x).numpy())
