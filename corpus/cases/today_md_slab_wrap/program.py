"""Soft-sphere molecular dynamics in periodic boxes, one compiled integrator step shared by every system.

A system's box gives its period along x, y and z; a slab is not periodic along z and a wire only along z,
marked by a box length of ``inf`` (minimum-image and wrapping leave such an axis alone). The integrator step
(forces, velocity Verlet, wrapping into the box) is compiled once and reused for every system and step, all
of the same shapes; the test runs each system under eager and compiled steps and compares the trajectories.

Upstream: https://github.com/pytorch/pytorch/issues/198057 (CPU Inductor's vectorized ``torch.remainder``
computes ``a - floor(a / b) * b``: NaN for an infinite divisor, where eager returns the dividend).
"""

import math
from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class System:
    name: str
    box: tuple
    particles: int = 16
    temperature: float = 0.5
    seed: int = 0


SYSTEMS = (
    System("bulk", (4.0, 4.0, 4.0)),
    System("slab", (4.0, 4.0, math.inf), seed=1),
    System("wire", (math.inf, math.inf, 6.0), seed=2),
)
STEPS = 6
DT = 0.01


def minimum_image(delta, box):
    """Nearest periodic image of each separation; axes with an infinite box are left as they are."""
    periodic = torch.isfinite(box)
    safe_box = torch.where(periodic, box, torch.ones_like(box))
    return torch.where(periodic, delta - safe_box * torch.round(delta / safe_box), delta)


def soft_sphere_forces(pos, box, stiffness=10.0, diameter=1.0):
    delta = minimum_image(pos[:, None, :] - pos[None, :, :], box)
    dist = delta.norm(dim=-1) + torch.eye(pos.shape[0])
    overlap = torch.clamp(diameter - dist, min=0.0)
    return (stiffness * overlap / dist)[..., None].mul(delta).sum(1)


def integrator_step(pos, vel, box):
    force = soft_sphere_forces(pos, box)
    vel = vel + DT * force
    pos = torch.remainder(pos + DT * vel, box)
    return pos, vel


compiled_step = torch.compile(integrator_step)


def initial_state(system):
    gen = torch.Generator().manual_seed(system.seed)
    box = torch.tensor(system.box)
    extent = torch.where(torch.isfinite(box), box, torch.full_like(box, 8.0))
    pos = torch.rand(system.particles, 3, generator=gen) * extent
    vel = torch.randn(system.particles, 3, generator=gen) * math.sqrt(system.temperature)
    return pos, vel, box


def trajectory(step, system):
    pos, vel, box = initial_state(system)
    frames = []
    for _ in range(STEPS):
        pos, vel = step(pos, vel, box)
        frames.append(pos)
    return torch.stack(frames), vel


def kinetic_energy(vel):
    return 0.5 * (vel**2).sum().item()


def test_compiled_integrator_matches_eager():
    problems = []
    for system in SYSTEMS:
        frames, vel = trajectory(integrator_step, system)
        compiled_frames, compiled_vel = trajectory(compiled_step, system)
        if not torch.allclose(compiled_frames, frames, atol=1e-5, equal_nan=False):
            problems.append(f"{system.name}: positions drift by {(compiled_frames - frames).abs().max().item():.3g}")
        if not math.isclose(kinetic_energy(compiled_vel), kinetic_energy(vel), rel_tol=1e-5):
            problems.append(f"{system.name}: kinetic energy {kinetic_energy(compiled_vel):.5f} vs {kinetic_energy(vel):.5f}")
    assert not problems, "; ".join(problems)


if __name__ == "__main__":
    test_compiled_integrator_matches_eager()
    print("all systems agree")
