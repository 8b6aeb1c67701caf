"""A rotation built by sliced assignment loses requires_grad under a (PLANTED) buggy torch.compile backend.

``rotate`` builds the skew-symmetric matrix [v]x of an axis-angle vector v by assigning into a zero matrix,
turns it into a rotation with Rodrigues' formula and rotates a point cloud. ``planted_backend`` (see
_planted.py) runs any graph containing sliced assignment under torch.no_grad(), so the compiled output comes
back detached and training would silently stop updating v. The smallest repro is one sliced assignment.
"""

import torch

from _planted import planted_backend

torch.manual_seed(0)
device = "cuda" if torch.cuda.is_available() else "cpu"


def skew(v):
    S = v.new_zeros(3, 3)
    S[0, 1] = -v[2]
    S[0, 2] = v[1]
    S[1, 0] = v[2]
    S[1, 2] = -v[0]
    S[2, 0] = -v[1]
    S[2, 1] = v[0]
    return S


def rotate(v, points):
    theta = torch.linalg.vector_norm(v).clamp_min(1e-8)
    K = skew(v / theta)
    eye = torch.eye(3, device=v.device, dtype=v.dtype)
    R = eye + torch.sin(theta) * K + (1 - torch.cos(theta)) * (K @ K)
    return torch.mean((points @ R.T - points) ** 2)


v = torch.randn(3, device=device, requires_grad=True)
points = torch.randn(64, 3, device=device)

assert rotate(v, points).requires_grad
out = torch.compile(rotate, backend=planted_backend)(v, points)
assert out.requires_grad, "compiled output lost requires_grad"
