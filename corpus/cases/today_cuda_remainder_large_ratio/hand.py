import torch

x = torch.tensor([1e10], device="cuda")
y = torch.tensor([1e-20], device="cuda")
torch.testing.assert_close(torch.compile(torch.remainder)(x, y), torch.remainder(x, y))
