import os
import torch
import torch.distributed as dist

dist.init_process_group("gloo")
rank = dist.get_rank()


def timestamps(start):
    return (torch.arange(0, 4, dtype=torch.int64) + start) * torch.tensor([10**9])


step = torch.compile(timestamps)
out = step(rank)
gathered = [torch.empty_like(out) for _ in range(dist.get_world_size())]
dist.all_gather(gathered, out)
dist.destroy_process_group()
if rank == 0:
    assert torch.equal(out, timestamps(rank)), "compiled timestamps differ"
