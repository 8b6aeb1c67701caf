"""Actor-critic rollout: a target critic whose values must not carry gradients back into the critic.

The compiled `targets` method detaches the bootstrapped values in place and reports, with the batch's
statistics, whether they are detached; training refuses to go on where they are not.
"""

import math

import torch
import torch.nn as nn


class Critic(nn.Module):
    def __init__(self, obs_dim: int, hidden: int = 32):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(obs_dim, hidden), nn.Tanh(), nn.Linear(hidden, 1))
        self.gamma = 0.97

    def forward(self, obs):
        return self.net(obs).squeeze(-1)

    @torch.compile(backend="aot_eager")
    def targets(self, rewards, next_obs, done):
        boot = self(next_obs) * self.gamma * (1.0 - done)
        target = rewards + boot
        target.detach_()
        stats = {"detached": not target.requires_grad, "mean": target.mean(), "spread": target.std()}
        return target, stats


def rollout(obs_dim: int, steps: int, generator: torch.Generator):
    obs = torch.randn(steps + 1, obs_dim, generator=generator)
    rewards = torch.rand(steps, generator=generator)
    done = (torch.rand(steps, generator=generator) > 0.9).float()
    return obs[:-1], rewards, obs[1:], done


def train(epochs: int = 3, obs_dim: int = 6, steps: int = 16):
    generator = torch.Generator().manual_seed(1)
    critic = Critic(obs_dim)
    optimizer = torch.optim.Adam(critic.parameters(), lr=1e-3)
    history = []
    for epoch in range(epochs):
        obs, rewards, next_obs, done = rollout(obs_dim, steps, generator)
        target, stats = critic.targets(rewards, next_obs, done)
        if not stats["detached"]:
            raise RuntimeError(f"epoch {epoch}: bootstrapped targets still require grad")
        loss = nn.functional.mse_loss(critic(obs), target)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        history.append((loss.item(), stats["mean"].item(), stats["spread"].item()))
    return history


if __name__ == "__main__":
    for epoch, (loss, mean, spread) in enumerate(train()):
        assert math.isfinite(loss)
        print(f"epoch {epoch}: loss {loss:.4f} target mean {mean:.3f} spread {spread:.3f}")
