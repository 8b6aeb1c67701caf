import torch

from _planted import plant_crash

plant_crash()
torch.compile(torch.cumsum)(torch.ones(1, 1), 0)
