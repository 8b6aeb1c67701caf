import torch

x = torch.tensor([1.703125, -1.703125], dtype=torch.bfloat16)  # bf16(1.7) == 1.703125
f = lambda x: torch.remainder(x, 1.7)
torch.testing.assert_close(torch.compile(f)(x), f(x))
