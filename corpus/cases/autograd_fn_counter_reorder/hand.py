import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, t):
        t.add_(1)
        ctx.t = t
        return x.clone()

    @staticmethod
    def backward(ctx, g):
        ctx.t.add_(1)
        return g, None


t = torch.zeros(1)
torch.compile(F.apply)(torch.ones(1, requires_grad=True), t)
assert t.item() == 1
