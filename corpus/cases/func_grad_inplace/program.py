"""Forces from an energy: a toy molecular-dynamics step takes torch.func.grad of a pair energy, compiled.

Upstream: https://github.com/pytorch/pytorch/issues/136662 (torch.compile of torch.func.grad over in-place
slice accumulation gives half the gradient under Inductor; torch 2.5).
"""

import argparse
import logging
import math

import torch

log = logging.getLogger("md")


class PairEnergy:
    """Energy of each particle from its third coordinate, accumulated into the first column."""

    def __init__(self, strength: float = 1.0, terms: int = 2):
        self.strength = strength
        self.terms = terms

    def __call__(self, positions: torch.Tensor) -> torch.Tensor:
        energy = torch.zeros_like(positions)
        for _ in range(self.terms):
            energy[:, 0] += positions[:, 2].abs()
        return self.strength * energy.sum()


def forces(energy_fn, positions):
    return torch.func.grad(energy_fn)(positions)


def kinetic(velocities: torch.Tensor, mass: float) -> float:
    return 0.5 * mass * float((velocities**2).sum())


def integrate(positions, velocities, force, dt, mass):
    velocities = velocities - dt * force / mass
    return positions + dt * velocities, velocities


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--particles", type=int, default=2)
    parser.add_argument("--dt", type=float, default=0.01)
    parser.add_argument("--mass", type=float, default=1.0)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)

    torch.manual_seed(0)
    energy = PairEnergy()
    positions = torch.randn(args.particles, 3)
    velocities = torch.zeros_like(positions)
    compiled_forces = torch.compile(lambda p: forces(energy, p), backend="inductor", fullgraph=True)

    eager_force = forces(energy, positions)
    compiled_force = compiled_forces(positions)
    log.warning("kinetic before %.4f", kinetic(velocities, args.mass))
    positions, velocities = integrate(positions, velocities, compiled_force, args.dt, args.mass)
    log.warning("kinetic after %.4f, dt %s, sqrt(dt) %.3f", kinetic(velocities, args.mass), args.dt, math.sqrt(args.dt))
    torch.testing.assert_close(compiled_force, eager_force)


if __name__ == "__main__":
    main()
