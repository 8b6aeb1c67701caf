"""Pagination planner for a CUDA batch scheduler: full pages per shard via truncating division, compiled.

Every shard's item count and page size live in float32 CUDA tensors (they come out of a cost model). The
planner computes the number of full pages with ``torch.div(..., rounding_mode='trunc')`` and the leftover
items; the compiled planner must agree with eager for each workload.

Upstream: https://github.com/pytorch/pytorch/issues/184408 (on CUDA, Inductor lowers trunc division as
trunc(a / b) with Triton's approximate division, so quotients near or at an integer come out off by one;
the floor path already uses div_rn). CUDA only; not verifiable on a CPU machine.
"""

from dataclasses import dataclass

import torch

DEVICE = "cuda"


@dataclass(frozen=True)
class Workload:
    name: str
    items: tuple
    page_size: tuple


WORKLOADS = (
    Workload("exact", (148.0, 1073.0, 2112.0), (37.0, 37.0, 33.0)),
    Workload("near", (14.999999, 26.999999, 13.999999), (3.0, 3.0, 7.0)),
    Workload("easy", (10.0, 20.0, 35.0), (4.0, 6.0, 5.0)),
)


def plan_pages(items, page_size):
    full = torch.div(items, page_size, rounding_mode="trunc")
    leftover = items - full * page_size
    return {"full_pages": full, "leftover": leftover, "total_pages": full + (leftover > 0).float()}


def check_workloads():
    compiled = torch.compile(plan_pages)
    failures = []
    for wl in WORKLOADS:
        items = torch.tensor(wl.items, device=DEVICE)
        size = torch.tensor(wl.page_size, device=DEVICE)
        expected = plan_pages(items, size)
        actual = compiled(items.clone(), size.clone())
        for key in ("full_pages", "leftover", "total_pages"):
            if not torch.allclose(actual[key], expected[key], atol=1e-4):
                failures.append(f"{wl.name}.{key}: eager {expected[key].tolist()} compiled {actual[key].tolist()}")
    return failures


if __name__ == "__main__":
    failures = check_workloads()
    print("\n".join(failures) or "page plans agree")
    assert not failures, f"{len(failures)} planner outputs differ"
