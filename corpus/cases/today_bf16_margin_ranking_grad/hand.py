import torch
import torch.nn.functional as F

x = torch.tensor([1.703125], dtype=torch.bfloat16, requires_grad=True)  # bf16(1.7)
y = torch.zeros(1, dtype=torch.bfloat16)
t = torch.ones(1, dtype=torch.bfloat16)


def f(x):
    return F.margin_ranking_loss(x, y, t, margin=1.7)


(ge,) = torch.autograd.grad(f(x), x)
(gc,) = torch.autograd.grad(torch.compile(f)(x), x)
torch.testing.assert_close(gc, ge)
