"""Gradient parity of a compiled policy network, parameter by parameter, after one backward pass.

Written for the corpus of check shapes (issue 46): ``torch.testing.assert_close`` of each ``p.grad`` against the
eager twin's, in a loop over named parameters. Inductor's SiLU is planted wrong (_planted.py).
"""
import argparse
import copy

import torch
import torch.nn as nn
import torch.nn.functional as F

from _planted import plant_miscompile  # PLANTED Inductor bug (see _planted.py)

plant_miscompile()
DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Policy(nn.Module):
    def __init__(self, obs=6, actions=3):
        super().__init__()
        self.body = nn.Linear(obs, 16)
        self.logits = nn.Linear(16, actions)

    def forward(self, obs):
        return self.logits(F.silu(self.body(obs)))


def policy_loss(logits, actions, advantages):
    logp = F.log_softmax(logits, -1).gather(1, actions[:, None]).squeeze(1)
    return -(logp * advantages).mean()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--batch", type=int, default=8)
    args = parser.parse_args()
    torch.manual_seed(0)
    policy = Policy().to(DEVICE)
    twin = copy.deepcopy(policy)
    obs = torch.randn(args.batch, 6, device=DEVICE)
    actions = torch.randint(0, 3, (args.batch,), device=DEVICE)
    advantages = torch.randn(args.batch, device=DEVICE)
    policy_loss(torch.compile(policy)(obs), actions, advantages).backward()
    policy_loss(twin(obs), actions, advantages).backward()
    reference = dict(twin.named_parameters())
    for name, p in policy.named_parameters():
        torch.testing.assert_close(p.grad, reference[name].grad, msg=f"gradient of {name} differs")


if __name__ == "__main__":
    main()
