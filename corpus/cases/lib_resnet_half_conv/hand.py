import torch

m = torch.nn.Conv2d(1, 1, 1, bias=False)
x = torch.ones(1, 1, 1, 1, dtype=torch.float16)
torch.compile(m)(x)
m(x)
