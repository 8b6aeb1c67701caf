"""Unit tests of a compiled SwiGLU-style projection, as a model author writes them with unittest.

Written for the corpus of check shapes (issue 46): ``self.assertTrue(torch.allclose(...))`` inside a TestCase
run by ``unittest.main()``, which exits 1. Inductor's SiLU is planted wrong (_planted.py).
"""
import unittest

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Projection(nn.Module):
    def __init__(self, dim=8):
        super().__init__()
        self.w1 = nn.Linear(dim, 2 * dim)
        self.w2 = nn.Linear(dim, dim)

    def forward(self, x):
        a, b = self.w1(x).chunk(2, dim=-1)
        return self.w2(F.silu(a) * b)


class ProjectionTest(unittest.TestCase):
    def setUp(self):
        torch.manual_seed(0)
        self.model = Projection().to(DEVICE)
        self.x = torch.randn(3, 8, device=DEVICE)

    def test_shapes(self):
        self.assertEqual(self.model(self.x).shape, (3, 8))

    def test_compiled_matches_eager(self):
        compiled = torch.compile(self.model)
        with torch.no_grad():
            self.assertTrue(torch.allclose(compiled(self.x), self.model(self.x), atol=1e-5))


if __name__ == "__main__":
    unittest.main()
