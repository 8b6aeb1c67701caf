"""Mixed-precision inference of a small vision block: the compiled call runs inside ``torch.autocast``.

The block (conv, SiLU, pooling, a linear head) is compiled with Inductor and called under CPU bfloat16
autocast, as the serving code does; the check compares with the eager block under the same autocast, with
bfloat16 tolerances.
"""

import argparse

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()


class VisionBlock(nn.Module):
    def __init__(self, channels=4, classes=5):
        super().__init__()
        self.conv = nn.Conv2d(3, channels, 3, padding=1)
        self.head = nn.Linear(channels, classes)

    def forward(self, images):
        h = F.silu(self.conv(images))
        return self.head(F.adaptive_avg_pool2d(h, 1).flatten(1))


def serve(block, images, dtype=torch.bfloat16):
    with torch.autocast("cpu", dtype=dtype):
        return block(images)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=2)
    args = parser.parse_args()
    torch.manual_seed(0)
    block = VisionBlock().eval()
    compiled = torch.compile(block, mode="default")
    images = torch.rand(args.batch, 3, 8, 8)
    with torch.no_grad():
        got = serve(compiled, images)
        want = serve(block, images)
    torch.testing.assert_close(got.float(), want.float(), atol=2e-2, rtol=2e-2)
    print("served", tuple(got.shape))


if __name__ == "__main__":
    main()
