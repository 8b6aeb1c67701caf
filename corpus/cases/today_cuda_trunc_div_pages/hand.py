import torch

a = torch.tensor([148.0, 1073.0, 2112.0], device="cuda")
b = torch.tensor([37.0, 37.0, 33.0], device="cuda")
f = lambda a, b: torch.div(a, b, rounding_mode="trunc")
torch.testing.assert_close(torch.compile(f)(a, b), f(a, b))
