import torch

x = -torch.arange(1, 17, dtype=torch.int8)
assert torch.compile(torch.max)(x).item() == torch.max(x).item()
