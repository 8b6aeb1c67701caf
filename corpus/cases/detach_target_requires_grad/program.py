"""Deep Q-learning step with a bootstrapped target: the target is computed in a compiled helper and detached
in place so that no gradient reaches the target network; the step's info says whether it did.

Upstream: https://github.com/pytorch/pytorch/issues/176854 (``y.detach_()`` inside a compiled function is
not seen by a later read of ``requires_grad`` in the same function, which is still True; eager detaches it).
"""

import argparse
import logging
from dataclasses import dataclass

import torch
from torch import nn

log = logging.getLogger("dqn")


@dataclass
class AgentConfig:
    observation: int = 6
    actions: int = 3
    hidden: int = 16
    batch: int = 8
    gamma: float = 0.99
    lr: float = 1e-3


class QNetwork(nn.Module):
    def __init__(self, config: AgentConfig):
        super().__init__()
        self.body = nn.Sequential(nn.Linear(config.observation, config.hidden), nn.ReLU())
        self.head = nn.Linear(config.hidden, config.actions)

    def forward(self, observation):
        return self.head(self.body(observation))


class ReplayBatch:
    def __init__(self, config: AgentConfig):
        self.observation = torch.randn(config.batch, config.observation)
        self.action = torch.randint(0, config.actions, (config.batch,))
        self.reward = torch.randn(config.batch)
        self.next_observation = torch.randn(config.batch, config.observation)
        self.done = torch.zeros(config.batch)


def bootstrap_target(next_q, reward, done, gamma):
    target = reward + gamma * (1 - done) * next_q.max(dim=-1).values
    target.detach_()
    info = {"target_attached": target.requires_grad, "target_mean": target.mean()}
    return target, info


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--gamma", type=float, default=0.99)
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    config = AgentConfig(gamma=args.gamma)
    torch.manual_seed(0)
    online, target_net = QNetwork(config), QNetwork(config)
    target_net.load_state_dict(online.state_dict())
    optimizer = torch.optim.SGD(online.parameters(), lr=config.lr)
    compute_target = torch.compile(bootstrap_target)
    batch = ReplayBatch(config)
    q = online(batch.observation).gather(1, batch.action[:, None]).squeeze(1)
    target, info = compute_target(target_net(batch.next_observation), batch.reward, batch.done, config.gamma)
    assert not info["target_attached"], "the bootstrap target must not reach the target network"
    loss = nn.functional.smooth_l1_loss(q, target)
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    log.warning("td loss %.4f", loss.item())


if __name__ == "__main__":
    main()
