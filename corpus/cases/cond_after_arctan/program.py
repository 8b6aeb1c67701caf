"""Training monitor: condition numbers of squashed weight matrices, computed by a compiled probe.

Upstream: https://github.com/pytorch/pytorch/issues/150114 (torch.linalg.cond after arctan gives inf under
Inductor where eager gives a finite number; a regression: fine on torch 2.5.1, fires on 2.13).
"""

import logging
from dataclasses import dataclass

import torch
import torch.nn as nn

log = logging.getLogger("monitor")


@dataclass
class MonitorConfig:
    size: int = 2
    fill: float = 1.0
    every: int = 1


class Probe(nn.Module):
    def forward(self, weight):
        squashed = torch.arctan(weight)
        return torch.linalg.cond(squashed)


class Monitor:
    def __init__(self, config: MonitorConfig):
        self.config = config
        self.probe = Probe()
        self.compiled = torch.compile(self.probe, backend="inductor")
        self.history = []

    def observe(self, weight):
        with torch.no_grad():
            eager = self.probe(weight)
            compiled = self.compiled(weight)
        self.history.append(float(compiled))
        return eager, compiled


def main():
    logging.basicConfig(level=logging.WARNING)
    config = MonitorConfig()
    monitor = Monitor(config)
    weight = torch.full((config.size, config.size), config.fill)
    eager, compiled = monitor.observe(weight)
    log.warning("cond eager %s compiled %s", eager.item(), compiled.item())
    finite = ~torch.isnan(eager)
    torch.testing.assert_close(compiled[finite], eager[finite])


if __name__ == "__main__":
    main()
