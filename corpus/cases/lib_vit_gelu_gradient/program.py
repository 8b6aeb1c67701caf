"""Train a small ViT classifier (from a config, random weights) with the vision training backend.

Two copies of the same model take the same steps on synthetic images, one compiled with the ``vision`` backend
and one eager; after training, their weights must agree.
"""

import copy

import torch
from transformers import ViTConfig, ViTForImageClassification

import vision_backend  # noqa: F401  (registers the "vision" backend)


def images(count, size, classes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    for _ in range(count):
        pixels = torch.randn(4, 3, size, size, generator=generator)
        yield pixels, torch.randint(0, classes, (4,), generator=generator)


def train(model, data, compiled, lr=1e-2):
    forward = torch.compile(model, backend="vision") if compiled else model
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    for pixels, labels in data:
        loss = forward(pixel_values=pixels, labels=labels).loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
    return model


def main():
    torch.manual_seed(0)
    config = ViTConfig(
        image_size=16,
        patch_size=4,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=5,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        attn_implementation="eager",
    )
    model = ViTForImageClassification(config)
    twin = copy.deepcopy(model)
    train(model, images(2, 16, 5), compiled=True)
    train(twin, images(2, 16, 5), compiled=False)
    for (name, a), b in zip(model.named_parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, msg=f"{name} trained differently under the vision backend")
    print("weights agree")


if __name__ == "__main__":
    main()
