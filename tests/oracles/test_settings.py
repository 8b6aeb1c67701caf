"""What an operation was told to compute (oracles.settings): the numbers and words, not the places or sizes."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from oracles.comparison import TracedFloat
from oracles.settings import launch_settings, operation_settings


def test_the_numbers_and_words_an_operation_is_given_by_parameter_name():
    x = torch.ones(2, 3)
    assert operation_settings(torch.Tensor.clamp, (x,), {"max": 5}) == "max=5"
    assert operation_settings(torch.clamp, (x, 0, 5), {}) == "min=0, max=5"
    assert operation_settings(F.leaky_relu, (x, 0.1), {}) == "negative_slope=0.1"
    assert operation_settings(F.leaky_relu, (x,), {"negative_slope": 0.1}) == "negative_slope=0.1"
    assert operation_settings(F.gelu, (x,), {"approximate": "tanh"}) == "approximate='tanh'"
    assert operation_settings(torch.Tensor.__mul__, (x, 0.5), {}) == "other=0.5"


def test_where_an_operation_works_and_numbers_read_from_a_suspect_are_not_settings():
    x = torch.ones(2, 3)
    assert operation_settings(torch.Tensor.softmax, (x, -1), {}) == ""
    assert operation_settings(torch.Tensor.mean, (x, -1), {"keepdim": True}) == "keepdim=True"
    assert operation_settings(torch.Tensor.__mul__, (x, TracedFloat(0.5, frozenset({"compiled"}))), {}) == ""
    assert operation_settings(torch.Tensor.__add__, (x, x), {}) == ""


def test_a_launch_is_told_its_numbers_but_not_the_sizes_of_its_tensors_nor_its_block():
    x = torch.ones(4, 5)
    launch = {"x_ptr": x, "n_elements": 20, "n_cols": 5, "stride": 5, "max_bucket": 6, "alpha": 0.5, "BLOCK": 64}
    assert launch_settings(launch, constexprs={"BLOCK"}) == "max_bucket=6, alpha=0.5"


def test_a_row_length_of_one_is_told_though_it_is_a_size():
    # Over one column `offs // n_cols` is the offset and `offs % n_cols` zero: another kernel computes there.
    x = torch.ones(4, 1)
    launch = {"x_ptr": x, "n_elements": 4, "n_cols": 1}
    assert launch_settings(launch, constexprs=set()) == ""
    assert launch_settings(launch, constexprs=set(), divisors=frozenset({"n_cols"})) == "n_cols=1"
    wider = {"x_ptr": torch.ones(4, 2), "n_elements": 8, "n_cols": 2}
    assert launch_settings(wider, constexprs=set(), divisors=frozenset({"n_cols"})) == ""


def test_the_parameters_a_kernel_divides_by_are_read_from_its_source():
    from oracles.kernel_launches import _divisors

    def kernel(x_ptr, n_elements, n_cols, BLOCK):
        offs = BLOCK + n_elements
        return x_ptr + offs // n_cols + offs % 3

    assert _divisors(kernel) == frozenset({"n_cols"})
