"""Fine-tune a small ViT classifier (from a config, random weights) through the accelerator's core-ATen backend.

The compiled model and an eager twin take the same optimizer steps on synthetic images; before the backend
is trusted with real training, the two must end with the same weights.
"""

import copy

import torch
from transformers import ViTConfig, ViTForImageClassification

import core_aten_backend  # noqa: F401  (registers the "core_aten" backend)


def batches(count, size, classes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [
        (torch.randn(4, 3, size, size, generator=generator), torch.randint(0, classes, (4,), generator=generator))
        for _ in range(count)
    ]


def fine_tune(model, data, backend=None, lr=5e-3):
    step = torch.compile(model, backend=backend) if backend else model
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    for pixels, labels in data:
        optimizer.zero_grad()
        step(pixel_values=pixels, labels=labels).loss.backward()
        optimizer.step()


def main():
    torch.manual_seed(0)
    config = ViTConfig(
        image_size=16,
        patch_size=4,
        hidden_size=32,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        num_labels=3,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
    )
    model = ViTForImageClassification(config)
    twin = copy.deepcopy(model)
    data = batches(2, 16, 3)
    fine_tune(model, data, backend="core_aten")
    fine_tune(twin, data)
    drift = {name: (a - b).abs().max().item() for (name, a), b in zip(model.named_parameters(), twin.parameters())}
    worst = max(drift, key=drift.get)
    assert drift[worst] < 1e-4, f"compiled fine-tuning drifted: {worst} off by {drift[worst]:.3g}"
    print("compiled and eager fine-tuning agree")


if __name__ == "__main__":
    main()
