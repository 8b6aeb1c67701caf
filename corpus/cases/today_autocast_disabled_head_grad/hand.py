import torch

torch.manual_seed(0)
w = torch.randn(8, 8, requires_grad=True)
h = torch.randn(2, 8, dtype=torch.bfloat16)


def f(x):
    with torch.autocast("cpu", enabled=False):
        return x.float() @ w.float().T


grads = []
for fn in (f, torch.compile(f, backend="aot_eager")):
    w.grad = None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = fn(h)
    out.sum().backward()
    grads.append(w.grad.clone())
torch.testing.assert_close(grads[1], grads[0])
