"""Bucketing of token positions for a relative-position bias with a Triton kernel, checked exactly.

Written for the corpus of check shapes (issue 46): integer outputs compared with (out == ref).all(). The
kernel clamps to one bucket too many. Runs under Triton's interpreter on CPU.
"""
import os

import torch

if not torch.cuda.is_available():
    os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse

import triton
import triton.language as tl

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


@triton.jit
def bucket_kernel(pos_ptr, out_ptr, n, max_bucket, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    pos = tl.load(pos_ptr + offs, mask=mask)
    bucket = tl.minimum(tl.abs(pos), max_bucket)
    tl.store(out_ptr + offs, bucket, mask=mask)


def relative_buckets(positions, num_buckets):
    out = torch.empty_like(positions)
    n = positions.numel()
    bucket_kernel[(triton.cdiv(n, 32),)](positions, out, n, num_buckets, BLOCK=32)
    return out


def reference_buckets(positions, num_buckets):
    return positions.abs().clamp(max=num_buckets - 1)


def relative_positions(length):
    idx = torch.arange(length, device=DEVICE)
    return (idx[None, :] - idx[:, None]).contiguous()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--length", type=int, default=10)
    parser.add_argument("--buckets", type=int, default=6)
    args = parser.parse_args()
    positions = relative_positions(args.length)
    ours = relative_buckets(positions, args.buckets)
    expected = reference_buckets(positions, args.buckets)
    assert (ours == expected).all(), "bucket kernel disagrees"
    print("buckets ok")


if __name__ == "__main__":
    main()
