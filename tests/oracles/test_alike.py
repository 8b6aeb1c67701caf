"""How two compared values differ, told from what both were computed alike from (oracles.alike)."""

from __future__ import annotations

import math

import pytest
import torch

from oracles.comparison import difference_digest
from tests.oracles.test_evidence import following_kernels

pytest.importorskip("triton")


def _compared(kernel_wrote, reference, read):
    """The failing comparison ``math.isclose(read(out), read(reference))``, ``out`` a kernel's output holding
    ``kernel_wrote``; the recorder's comparison and the two numbers compared."""

    with following_kernels() as (writes, recorder):
        out = torch.empty_like(kernel_wrote)
        writes.note(out, "scale_shift_kernel")
        out.copy_(kernel_wrote)
        numbers = (read(out), read(reference))
        assert not math.isclose(*numbers)
    return recorder.comparisons[-1], numbers


def _exp_sum(t):
    return t.double().exp().sum()


def test_numbers_reduced_alike_are_told_by_how_their_sources_differ():
    # Never-seen seeds 381, 392, 414, 446: the kernel reads `shift[offs // n_cols]` where the reference reads
    # `shift`; both add `scale`. Dropping `scale +` from both keeps the bug; the two sums move all the same.
    scale, shift = torch.ones(2), torch.arange(2.0)
    with_scale, numbers = _compared(scale + shift[[0, 0]], scale + shift, _exp_sum)
    without_scale, others = _compared(shift[[0, 0]], shift, _exp_sum)
    assert with_scale.differences == without_scale.differences
    assert difference_digest(numbers) != difference_digest(others)


def test_sources_that_differ_otherwise_or_steps_that_differ_are_another_difference():
    scale, shift = torch.ones(2), torch.arange(2.0)
    bug, _ = _compared(scale + shift[[0, 0]], scale + shift, _exp_sum)
    other_bug, _ = _compared(scale + shift[[1, 1]], scale + shift, _exp_sum)
    other_steps, _ = _compared(scale + shift[[0, 0]], scale + shift, lambda t: t.double().sum())
    assert len({bug.differences, other_bug.differences, other_steps.differences}) == 3


def test_numbers_read_with_item_carry_their_source():
    scale, shift = torch.ones(2), torch.arange(2.0)
    item, _ = _compared(scale + shift[[0, 0]], scale + shift, lambda t: _exp_sum(t).item())
    dropped, _ = _compared(shift[[0, 0]], shift, lambda t: _exp_sum(t).item())
    assert item.differences is not None and item.differences == dropped.differences


def test_a_kernels_output_is_a_source_whatever_made_the_tensor_it_wrote_into():
    # `out = h * 1` and the kernel writes into `out`: the steps start at the kernel's output, not at `h`.
    with following_kernels() as (writes, recorder):
        h = torch.ones(2)
        out = h * 1
        writes.note(out, "scale_shift_kernel")
        out.fill_(1.0)  # as a kernel writes: one tensor in, which alone would continue `h`'s steps
        reference = torch.ones(2) + torch.arange(2.0)
        assert not math.isclose(_exp_sum(out), _exp_sum(reference))
    expected = difference_digest((torch.tensor([1.0, 1.0]), reference), told="double()+exp()+sum()")
    assert recorder.comparisons[-1].differences == expected


def test_an_in_place_write_of_two_tensors_starts_afresh():
    with following_kernels() as (writes, recorder):
        out = torch.empty(2)
        writes.note(out, "k")
        out.copy_(torch.ones(2))
        a = torch.ones(2) * 2
        a.copy_(torch.arange(2.0))  # two tensors in: `a` is its own source now
        assert not math.isclose(_exp_sum(out), _exp_sum(a))
    expected = difference_digest((torch.ones(2), torch.arange(2.0)), told="double()+exp()+sum()")
    assert recorder.comparisons[-1].differences == expected


def test_numbers_reduced_alike_differ_where_the_kernel_did_not_write_as_their_sources_do():
    # Never-seen seed 414 at the final code: the launch shrank to one element of `out = torch.ones(2)` and the
    # two sums differed by the unwritten element, where the fixed kernel fails too.
    with following_kernels() as (writes, recorder):
        out, reference = torch.ones(2), torch.tensor([5.0, 6.0])
        writes.note(out, "scale_shift_kernel", unchanged=torch.tensor([False, True]))
        out[0] = 5.0  # the one element written, right
        assert not math.isclose(_exp_sum(out), _exp_sum(reference))
    compared = recorder.comparisons[-1].signature
    assert compared.startswith("math.isclose of kernel scale_shift_kernel then exp+sum, differing where it did not write")
