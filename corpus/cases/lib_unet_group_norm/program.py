"""Denoise a batch of latents with a small diffusers UNet (from its config, random weights) for the device.

The sampler compiles the UNet once with the on-device ``edge`` backend and runs a few denoising steps of a
simple DDPM-style update; an eager run of the same steps must give the same latents.
"""

import torch
from diffusers import UNet2DModel

import edge_backend  # noqa: F401  (registers the "edge" backend)


def build_unet():
    return UNet2DModel(
        sample_size=16,
        in_channels=3,
        out_channels=3,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("DownBlock2D", "AttnDownBlock2D"),
        up_block_types=("AttnUpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
    ).eval()


@torch.no_grad()
def sample(unet, latents, steps=3):
    for t in reversed(range(steps)):
        timestep = torch.full((latents.shape[0],), t * 100)
        noise = unet(latents, timestep).sample
        latents = latents - 0.1 * noise
    return latents


def main():
    torch.manual_seed(0)
    unet = build_unet()
    latents = torch.randn(2, 3, 16, 16)
    on_device = sample(torch.compile(unet, backend="edge"), latents)
    reference = sample(unet, latents)
    torch.testing.assert_close(on_device, reference, rtol=1e-4, atol=1e-4)
    print("sampler matches eager")


if __name__ == "__main__":
    main()
