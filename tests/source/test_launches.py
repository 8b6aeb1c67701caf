import os

import libcst as cst
import pytest

from minimizer.source.passes.kernels.launches import single_program_launches

KERNEL = """\
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs // 2), mask=offs < n)


x = torch.arange(4.0)
out = torch.zeros(4)
"""


def codes(source):
    return [candidate.code for candidate in single_program_launches(cst.parse_module(source))]


def test_a_program_per_element_becomes_one_program_over_every_element():
    (one,) = codes(KERNEL + "k[4,](x, out, 4, 1)\n")
    assert "    offs = tl.arange(0, BLOCK)\n" in one and one.endswith("k[1,](x, out, 4, 4)\n")
    (keyword,) = codes(KERNEL + "k[(2,)](x, out, 4, BLOCK=2)\n")
    assert keyword.endswith("k[(1,)](x, out, 4, BLOCK=4)\n")


def test_an_index_read_elsewhere_reads_zero():
    source = KERNEL.replace("offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "row = tl.program_id(axis=0)\n    offs = row * BLOCK + tl.arange(0, BLOCK)")
    (one,) = codes(source + "k[2,](x, out, 4, 2)\n")
    assert "row = 0\n" in one and one.endswith("k[1,](x, out, 4, 4)\n")


@pytest.mark.parametrize("launch", [
    "k[3,](x, out, 4, 1)\n",  # 3 elements: no tl.arange of that length
    "k[grid](x, out, 4, 1)\n",  # a grid the source does not state
    "k[4,](x, out, 4, 1)\nk[4,](x, out, 4, 1)\n",  # launched twice: program_id means something at each
    "k[4,](x, out, 4, 1)\nkernels = [k]\n",  # read elsewhere
    "k[4,](x, out, 4, block)\n",  # a block size the source does not state
])
def test_launches_it_cannot_see_whole_stay(launch):
    assert codes(KERNEL + launch) == []


def test_one_program_already_reads_its_index_as_zero():
    (one,) = codes(KERNEL + "k[1,](x, out, 4, 4)\n")
    assert "    offs = tl.arange(0, BLOCK)\n" in one and one.endswith("k[1,](x, out, 4, 4)\n")
    from minimizer.source.passes.kernels.launches import launches_as_run

    (told,) = [c.code for c in launches_as_run({"k": 1})(cst.parse_module(KERNEL + "k[x.numel(),](x, out, 4, 4)\n"))]
    assert "    offs = tl.arange(0, BLOCK)\n" in told and told.endswith("k[1,](x, out, 4, 4)\n")
    unplaced = KERNEL.replace("tl.program_id(0) * BLOCK + ", "") + "k[x.numel(),](x, out, 4, 4)\n"
    (grid,) = [c.code for c in launches_as_run({"k": 1})(cst.parse_module(unplaced))]
    assert grid.endswith("k[1,](x, out, 4, 4)\n")


def test_the_single_program_writes_what_the_many_did():
    os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    import torch

    outputs = []
    for code in [KERNEL + "k[4,](x, out, 4, 1)\n", *codes(KERNEL + "k[4,](x, out, 4, 1)\n")]:
        namespace = {}
        exec(compile(code, "<kernel>", "exec"), namespace)
        outputs.append(namespace["out"])
    assert torch.equal(outputs[0], outputs[1]) and outputs[0].tolist() == [0.0, 0.0, 1.0, 1.0]


def test_a_block_size_already_bound_in_the_kernel_widens_with_the_launch():
    source = KERNEL.replace("BLOCK: tl.constexpr", "BLOCK").replace(
        "tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "tl.program_id(0) * 1 + tl.arange(0, 1)"
    )
    (one,) = codes(source + "k[4,](x, out, 4, 1)\n")
    assert "    offs = tl.arange(0, 4)\n" in one and one.endswith("k[1,](x, out, 4, 1)\n")


def test_only_a_block_size_may_be_bound_in_the_launch_round():
    from minimizer.source.passes.kernels.launches import block_sizes_only
    from minimizer.source.passes.signatures.parameters import bind_constant_parameters

    source = KERNEL.replace("n, BLOCK", "n, limit, BLOCK").replace("mask=offs < n)", "mask=offs < limit)") + "k[1,](x, out, 4, 4, 4)\n"
    every = [c.code for c in bind_constant_parameters(cst.parse_module(source))]
    kept = [c.code for c in block_sizes_only(bind_constant_parameters)(cst.parse_module(source))]
    assert len(every) == 2 and len(kept) == 1  # limit and BLOCK may be bound; only BLOCK is kept
    assert "def k(x_ptr, out_ptr, n, limit):" in kept[0] and "tl.arange(0, 4)" in kept[0]


def test_a_grid_computed_at_run_time_is_read_as_the_run_launched_it():
    from minimizer.source.passes.kernels.launches import launches_as_run

    source = KERNEL + "grid = (triton.cdiv(4, 1),)\nk[grid](x, out, 4, 1)\n"
    (one,) = [c.code for c in launches_as_run({"k": 4})(cst.parse_module(source))]
    assert "    offs = tl.arange(0, BLOCK)\n" in one and one.endswith("k[1,](x, out, 4, 4)\n")
    assert codes(source) == [] and list(launches_as_run({"k": 3})(cst.parse_module(source))) == []
    twice = source + "k[grid](x, out, 4, 1)\n"
    assert list(launches_as_run({"k": 4})(cst.parse_module(twice))) == []


def test_the_run_tells_a_kernels_grid_only_where_every_launch_had_the_same():
    from oracles.kernel_launches import KernelLaunches, _programs

    assert [_programs(g) for g in (4, (4,), (4, 1, 1), [2], (2, 2), lambda meta: (1,))] == [4, 4, 4, 2, None, None]
    launches = KernelLaunches(None)
    launches._grids["k"] |= {4}
    launches._grids["varies"] |= {1, 2}
    launches._grids["callable"] |= {None}
    assert launches.one_grids() == (("k", 4),)
