"""Recurrent encoder ported from old code: the initial hidden state is allocated with ``torch.Tensor(size)``.

The state initializer projects the first frame, then allocates the hidden state with the legacy constructor
``torch.Tensor(h.size())`` and fills it with the learned initial value. The initializer is compiled; every
configuration checks the state's shape and values against eager before the recurrence runs.

Upstream: https://github.com/pytorch/pytorch/issues/196467 (Dynamo bakes the ``torch.Size`` into the graph as
a plain tuple, so ``torch.Tensor(t.size())`` becomes ``torch.Tensor((1, 4))``: a 1-D tensor holding the
sizes instead of an uninitialized tensor of that shape).
"""

from dataclasses import dataclass

import torch
import torch.nn as nn


@dataclass(frozen=True)
class EncoderConfig:
    batch: int
    features: int
    hidden: int
    steps: int = 5


CONFIGS = (
    EncoderConfig(batch=1, features=10, hidden=4),
    EncoderConfig(batch=3, features=6, hidden=8),
)


class StateInit(nn.Module):
    def __init__(self, features, hidden):
        super().__init__()
        self.proj = nn.Linear(features, hidden)
        self.init_value = nn.Parameter(torch.tensor(0.1))

    def forward(self, first_frame):
        h = self.proj(first_frame)
        state = torch.Tensor(h.size())
        state.fill_(0.0)
        return state + self.init_value


class Encoder(nn.Module):
    def __init__(self, config: EncoderConfig):
        super().__init__()
        self.init = StateInit(config.features, config.hidden)
        self.cell = nn.RNNCell(config.features, config.hidden)

    def forward(self, frames, init_fn):
        state = init_fn(frames[0])
        for frame in frames:
            state = self.cell(frame, state)
        return state


def check(config: EncoderConfig):
    torch.manual_seed(0)
    encoder = Encoder(config).eval()
    compiled_init = torch.compile(encoder.init)
    frames = torch.randn(config.steps, config.batch, config.features)
    with torch.no_grad():
        expected_state = encoder.init(frames[0])
        state = compiled_init(frames[0])
        assert state.shape == (config.batch, config.hidden), f"{config}: initial state has shape {tuple(state.shape)}"
        torch.testing.assert_close(state, expected_state)
        torch.testing.assert_close(encoder(frames, compiled_init), encoder(frames, encoder.init))


if __name__ == "__main__":
    for config in CONFIGS:
        check(config)
        print("ok", config)
