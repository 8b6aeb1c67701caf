"""Actor-critic value targets computed by a compiled method of a config dataclass.

``ReturnEstimator.targets`` builds the bootstrapped returns and detaches them in place, so that the critic's
loss sends no gradient into the bootstrap; it reports whether the returns are still attached. The evaluation
collects problems over a few rollouts and asserts there are none.

Upstream: https://github.com/pytorch/pytorch/issues/176854 (torch 2.5.1: inside a compiled function,
``y.detach_()`` is not seen by a later read of ``y.requires_grad``, which stays True).
"""

import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("a2c")


@dataclass
class ReturnEstimator:
    gamma: float = 0.97
    lam: float = 0.9

    @torch.compile(backend="eager")
    def targets(self, rewards, values, next_value):
        returns = rewards + self.gamma * next_value - (1 - self.lam) * values
        returns.detach_()
        return returns, returns.requires_grad


class Critic(nn.Module):
    def __init__(self, observation=4, hidden=8):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(observation, hidden), nn.Tanh(), nn.Linear(hidden, 1))

    def forward(self, observation):
        return self.net(observation).squeeze(-1)


def rollout(critic, steps=5, observation=4, seed=0):
    generator = torch.Generator().manual_seed(seed)
    observations = torch.randn(steps + 1, observation, generator=generator)
    rewards = torch.rand(steps, generator=generator)
    values = critic(observations)
    return rewards, values[:-1], values[1:]


def evaluate(critic, estimator, rollouts=3):
    problems = []
    for seed in range(rollouts):
        rewards, values, next_values = rollout(critic, seed=seed)
        returns, attached = estimator.targets(rewards, values, next_values)
        if attached:
            problems.append(f"rollout {seed}: returns still attached to the critic")
        loss = (values - returns).pow(2).mean()
        log.info("rollout %d critic loss %.4f", seed, loss.item())
    return problems


def main():
    logging.basicConfig(level=logging.WARNING)
    torch.manual_seed(0)
    problems = evaluate(Critic(), ReturnEstimator())
    assert not problems, problems


if __name__ == "__main__":
    main()
