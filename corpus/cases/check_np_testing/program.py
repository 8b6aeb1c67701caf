"""Export check of a compiled denoiser: outputs compared as numpy arrays, as an export pipeline does.

Written for the corpus of check shapes (issue 46): ``np.testing.assert_allclose`` on ``.cpu().numpy()`` values.
Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse

import numpy as np
import torch
import torch.nn as nn

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Denoiser(nn.Module):
    def __init__(self, channels=4):
        super().__init__()
        self.net = nn.Sequential(nn.Conv1d(channels, 8, 3, padding=1), nn.SiLU(), nn.Conv1d(8, channels, 3, padding=1))

    def forward(self, noisy, sigma):
        return noisy - sigma * self.net(noisy)


def to_numpy(t):
    return t.detach().cpu().numpy()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--length", type=int, default=12)
    args = parser.parse_args()
    torch.manual_seed(0)
    model = Denoiser().to(DEVICE).eval()
    exported = torch.compile(model)
    noisy = torch.randn(2, 4, args.length, device=DEVICE)
    sigma = 0.3
    reference = to_numpy(model(noisy, sigma))
    candidate = to_numpy(exported(noisy, sigma))
    np.testing.assert_allclose(candidate, reference, rtol=1e-5, atol=1e-5)
    print("export ok")


if __name__ == "__main__":
    main()
