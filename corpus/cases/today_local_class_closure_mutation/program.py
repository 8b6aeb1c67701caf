"""Preprocessing pipeline with call accounting: a locally defined tracker records every batch it normalizes.

``build_pipeline`` returns a normalize step and the shared ``stats`` it keeps. The step creates a small
``BatchTracker`` (a class defined inside the factory) whose method appends the batch shape to a closure list
and bumps a closure counter. The step is compiled; after a few batches the accounting must show every batch.

Upstream: https://github.com/pytorch/pytorch/issues/197896 (Dynamo silently drops mutations of a
closure-captured list/dict made in a method of a locally defined class instantiated inside the compiled
function: no graph break, the tensor result is right, the containers stay empty).
"""

from dataclasses import dataclass

import torch


@dataclass
class PipelineConfig:
    features: int = 6
    batches: tuple = (4, 4, 8)
    eps: float = 1e-5


def build_pipeline(config: PipelineConfig):
    shapes = []
    counters = {"batches": 0, "rows": 0}

    class BatchTracker:
        def __init__(self, x):
            self.x = x

        def record(self):
            shapes.append(tuple(self.x.shape))
            counters["batches"] += 1
            counters["rows"] += self.x.shape[0]

    def normalize(x):
        BatchTracker(x).record()
        mean = x.mean(dim=0, keepdim=True)
        std = x.std(dim=0, keepdim=True)
        return (x - mean) / (std + config.eps)

    return normalize, shapes, counters


def run(config: PipelineConfig, compile_step: bool):
    step, shapes, counters = build_pipeline(config)
    fn = torch.compile(step) if compile_step else step
    torch.manual_seed(0)
    outputs = [fn(torch.randn(rows, config.features) * 3 + 1) for rows in config.batches]
    return outputs, shapes, counters


def check(config: PipelineConfig):
    outputs, shapes, counters = run(config, compile_step=True)
    expected_rows = sum(config.batches)
    for out in outputs:
        assert torch.isfinite(out).all()
        torch.testing.assert_close(out.mean(0), torch.zeros(config.features), atol=1e-5, rtol=0)
    print("recorded shapes:", shapes)
    print("counters:", counters)
    assert counters["batches"] == len(config.batches), f"tracked {counters['batches']} of {len(config.batches)} batches"
    assert counters["rows"] == expected_rows, f"tracked {counters['rows']} of {expected_rows} rows"
    assert len(shapes) == len(config.batches)


if __name__ == "__main__":
    check(PipelineConfig())
    print("pipeline accounting ok")
