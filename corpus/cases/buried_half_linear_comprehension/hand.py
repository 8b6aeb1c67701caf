import torch

m = torch.nn.Linear(1, 1)
x = torch.ones(1, 1, dtype=torch.float16)
torch.compile(m)(x)
m(x)
