"""Sequence packing for variable-length attention: the tokens of several sequences share one row, and
``cu_seqlens`` holds the cumulative lengths. Each token's sequence is found by a search over the sequence ends
(``cu_seqlens[1:]``); its position inside the sequence and a block-diagonal causal mask follow. The layout step
is compiled; a test-style check compares it with eager over a few batches.

Upstream: https://github.com/pytorch/pytorch/issues/182343 (Inductor's Triton lowering of ``searchsorted`` on a
sliced boundaries tensor ignores the view's storage offset: segment ids off by one on CUDA).
"""

from dataclasses import dataclass

import torch
import torch.nn.functional as F

DEVICE = "cuda"


@dataclass(frozen=True)
class PackedBatch:
    lengths: tuple
    pad_to: int = 16

    def cu_seqlens(self) -> torch.Tensor:
        lengths = torch.tensor(self.lengths, device=DEVICE)
        return F.pad(torch.cumsum(lengths, 0), (1, 0))


def segment_layout(cu_seqlens: torch.Tensor, positions: torch.Tensor):
    segment = torch.searchsorted(cu_seqlens[1:], positions, right=True)
    offset = positions - cu_seqlens[segment.clamp(max=cu_seqlens.numel() - 1)]
    same_sequence = segment[:, None] == segment[None, :]
    causal = offset[:, None] >= offset[None, :]
    return {"segment": segment, "offset": offset, "mask": same_sequence & causal}


BATCHES = (
    PackedBatch((3, 4, 5)),
    PackedBatch((7, 1, 2, 6)),
    PackedBatch((16,)),
)


def test_packed_layout_matches_eager():
    layout = torch.compile(segment_layout)
    failures = []
    for batch in BATCHES:
        cu_seqlens = batch.cu_seqlens()
        positions = torch.arange(batch.pad_to, device=DEVICE)
        expected = segment_layout(cu_seqlens, positions)
        actual = layout(cu_seqlens, positions)
        for name in ("segment", "offset", "mask"):
            if not torch.equal(actual[name], expected[name]):
                failures.append(f"{batch.lengths}: {name}")
    assert not failures, f"packed layout differs from eager: {failures}"


if __name__ == "__main__":
    test_packed_layout_matches_eager()
    print("packed layout ok")
