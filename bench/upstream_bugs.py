"""Real PyTorch bugs the program generator (``bench/generate.py``) plants: the corpus's real cases, as an op a
model's forward can call on any activation.

Each bug is a helper the program defines and calls where a plain model calls its activation; the release it fires
on, the release that fixed it, the tracker issue, and the hand repro (the corpus case's own) come with it. Only
bugs that fire on whatever values a model computes are here: 150114 (``linalg.cond`` after ``arctan``) fires only
on a matrix of one repeated value, 138908 only with dynamic shapes and negative indices, so they stay corpus cases.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UpstreamBug:
    name: str
    upstream: str
    crash: bool  # the compiled call raises (no check runs); else its values differ from eager's
    op: str  # the helper the model calls in place of its activation
    helper: str  # the helper's definition, as the program writes it
    hand: str  # the smallest script showing the bug (the corpus case's hand repro)
    torch: str = "2.5.1"  # fires on this release
    passes_on: str = "2.13.0"  # fixed on this one
    layer: str = "Inductor"  # where the fix landed (minimizer.stages.culprit's names)
    # Whether a training step may call it: a gradient that is NaN in eager too spreads into the weights, and the
    # next step's outputs are NaN with or without the compiler (a check that reads NaN as unequal then fails).
    trains: bool = True


TANHSHRINK_PHASE = UpstreamBug(
    name="tanhshrink_phase",
    upstream="https://github.com/pytorch/pytorch/issues/148241",
    crash=False,
    op="soft_phase",
    helper='''
def soft_phase(h):
    """The phase of a softly shrunk activation: its sign, read by atan2."""
    t = F.tanhshrink(h * 1e-3)
    return torch.atan2(t, t)
''',
    trains=False,  # atan2(t, t)'s gradient is NaN where t is 0, as tanhshrink of a small value often is in eager
    hand='''import torch


def f(x):
    x = torch.nn.functional.tanhshrink(x)
    return torch.atan2(x, x)


x = torch.full((8,), -0.00026)
torch.testing.assert_close(torch.compile(f)(x), f(x))
''',
)

COMPLEX_OFFSET = UpstreamBug(
    name="complex_offset",
    upstream="https://github.com/pytorch/pytorch/issues/160495",
    crash=True,
    op="rotate",
    helper='''
PHASE_OFFSET = torch.tensor(0.5 + 0.25j)


def rotate(h):
    """Pairs of features as complex numbers, shifted by one complex offset, and back."""
    z = torch.view_as_complex(h.reshape(*h.shape[:-1], -1, 2).contiguous())
    return torch.view_as_real(z + PHASE_OFFSET).flatten(-2)
''',
    hand='''import torch


def f(x, y):
    return x + y


torch.compile(f)(torch.ones(1, dtype=torch.complex64), torch.ones((), dtype=torch.complex64))
''',
)

UPSTREAM_BUGS = {bug.name: bug for bug in (TANHSHRINK_PHASE, COMPLEX_OFFSET)}
