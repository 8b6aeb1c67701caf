"""Image-embedding service check: a torchvision ResNet backbone, compiled for serving, must refuse what eager refuses.

Requests arrive as float16 pixels while the backbone's weights stay float32; eager rejects such a batch, and the
service relies on the compiled backbone rejecting it too (it falls back to a float32 path on rejection).
"""

import torch
from torchvision.models.resnet import BasicBlock, ResNet

REQUEST_DTYPES = [torch.float32, torch.float16]


def backbone():
    """ResNet-10 (one BasicBlock per stage) with its classifier removed: it returns 512-wide embeddings."""

    model = ResNet(BasicBlock, [1, 1, 1, 1])
    model.fc = torch.nn.Identity()
    return model.eval()


def serve(model, pixels):
    try:
        with torch.no_grad():
            return "embedded", model(pixels).shape
    except RuntimeError:
        return "rejected", None


def main():
    torch.manual_seed(0)
    model = backbone()
    compiled = torch.compile(model)
    for dtype in REQUEST_DTYPES:
        pixels = torch.rand(2, 3, 32, 32).to(dtype)
        eager, served = serve(model, pixels), serve(compiled, pixels)
        print(f"{dtype}: eager {eager[0]}, compiled {served[0]}")
        assert eager[0] == served[0], f"compiled backbone {served[0]} a {dtype} batch that eager {eager[0]}"


if __name__ == "__main__":
    main()
