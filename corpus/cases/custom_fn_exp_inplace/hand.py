import torch


class F(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x.exp_()

    @staticmethod
    def backward(ctx, g):
        return g


torch.compile(F.apply)(torch.ones(1, requires_grad=True))
