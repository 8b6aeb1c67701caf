import torch

torch.manual_seed(0)
x = torch.randn(1, 100, dtype=torch.float16, device="cuda")
e = torch.randint(2, 32, (1, 100), dtype=torch.int8, device="cuda")
torch.testing.assert_close(torch.compile(torch.ldexp)(x, e), torch.ldexp(x, e))
