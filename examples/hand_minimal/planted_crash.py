# Hand-minimal repro of ../planted_crash.py: the yardstick for the size of minimizer's output.
import torch
from _planted import plant_crash

plant_crash()
torch.compile(lambda x: x.softmax(0))(torch.randn(4))
