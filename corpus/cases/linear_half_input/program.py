"""Inference service smoke test: the request path casts features to float16, which eager rejects.

Upstream: https://github.com/pytorch/pytorch/issues/141865 (Inductor on CPU runs nn.Linear on a float16 input
with float32 weights, where eager raises a dtype error).
"""

import logging
from dataclasses import dataclass, field

import torch
import torch.nn as nn

logging.basicConfig(level=logging.WARNING)
log = logging.getLogger("serve")


@dataclass
class ServeConfig:
    features: int = 1
    hidden: int = 1
    request_dtype: torch.dtype = torch.float16
    batch_sizes: list = field(default_factory=lambda: [1])


class Scorer(nn.Module):
    def __init__(self, features: int, hidden: int):
        super().__init__()
        self.proj = nn.Linear(features, hidden)

    def forward(self, x):
        return self.proj(x)


class Service:
    def __init__(self, config: ServeConfig):
        self.config = config
        self.model = Scorer(config.features, config.hidden).eval()
        self.compiled = torch.compile(self.model)

    def request(self, batch: int) -> torch.Tensor:
        return torch.randn(batch, self.config.features).to(self.config.request_dtype)


def outcome(fn, x) -> str:
    try:
        fn(x)
        return "ok"
    except RuntimeError as error:
        log.info("rejected: %s", error)
        return "rejected"


def main() -> None:
    config = ServeConfig()
    service = Service(config)
    for batch in config.batch_sizes:
        x = service.request(batch)
        eager = outcome(service.model, x)
        compiled = outcome(service.compiled, x)
        log.warning("batch %d: eager %s, compiled %s", batch, eager, compiled)
        assert eager == compiled, "compiled model accepts inputs that eager rejects"


if __name__ == "__main__":
    main()
