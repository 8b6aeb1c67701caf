import libcst as cst

from minimizer.source.passes.kernels.memory import constant_kernel_loads

KERNEL = """import triton
import triton.language as tl


@triton.jit
def k(x_ptr, y_ptr):
    x = tl.load(x_ptr + tl.program_id(0))
    tl.store(y_ptr, x + tl.load(y_ptr))


def not_a_kernel(tl):
    return tl.load(1)
"""


def test_loads_in_kernels_become_constants_together_then_alone():
    every, first, second = [c.code for c in constant_kernel_loads(cst.parse_module(KERNEL))]
    assert "    x = 0.0\n    tl.store(y_ptr, x + 0.0)\n" in every
    assert "    x = 0.0\n    tl.store(y_ptr, x + tl.load(y_ptr))\n" in first
    assert "    x = tl.load(x_ptr + tl.program_id(0))\n    tl.store(y_ptr, x + 0.0)\n" in second
    assert all("return tl.load(1)" in code for code in (every, first, second))  # only inside @triton.jit


def test_masks_go_from_loads_and_stores_together_then_call_by_call():
    from minimizer.source.passes.kernels.memory import drop_kernel_masks

    source = (
        "import triton\n\n\n@triton.jit\ndef k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.arange(0, BLOCK)\n    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n"
        "    tl.store(out_ptr + offs, x, offs < n)\n    tl.store(out_ptr, x)\n\n\ndef f(mask):\n    return tl.load(p, mask=mask)\n"
    )
    every, load, store = [c.code for c in drop_kernel_masks(cst.parse_module(source))]
    assert "x = tl.load(x_ptr + offs)\n    tl.store(out_ptr + offs, x)\n" in every
    assert "x = tl.load(x_ptr + offs)\n    tl.store(out_ptr + offs, x, offs < n)\n" in load
    assert "x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)\n    tl.store(out_ptr + offs, x)\n" in store
    assert all("return tl.load(p, mask=mask)" in c for c in (every, load, store))  # not a kernel


def test_a_mask_nothing_reads_goes_with_the_masks_that_read_it_or_alone():
    from minimizer.source.passes.kernels.memory import drop_kernel_masks

    source = (
        "import triton\n\n\n@triton.jit\ndef k(x_ptr, out_ptr, n):\n    offs = tl.arange(0, 2)\n    mask = offs < n\n"
        "    inside = offs < n\n    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=inside))\n"
    )
    alone, every = [c.code for c in drop_kernel_masks(cst.parse_module(source))]
    assert "mask = offs < n" not in alone and "inside = offs < n" in alone and "mask=inside" in alone
    assert "offs < n" not in every and "tl.load(x_ptr + offs)" in every


ONE_ELEMENT = """\
import torch
import triton
import triton.language as tl


@triton.jit
def k(x_ptr, out_ptr):
    offs = tl.arange(0, 1)
    out = tl.load(x_ptr + offs)
    out = out + tl.load(x_ptr + tl.arange(0, 1))
    tl.store(out_ptr + offs, out)


x = torch.full((1,), 1.5)
out = torch.zeros(1)
k[1,](x, out)
"""


def test_a_block_of_one_element_is_read_as_its_scalar_and_writes_the_same():
    import os

    import pytest

    from minimizer.source.passes.kernels.memory import one_element_blocks_as_scalars

    (scalar,) = [c.code for c in one_element_blocks_as_scalars(cst.parse_module(ONE_ELEMENT))]
    assert "offs" not in scalar and "out = tl.load(x_ptr)\n" in scalar and "tl.store(out_ptr, out)\n" in scalar
    masked = ONE_ELEMENT.replace("tl.store(out_ptr + offs, out)", "tl.store(out_ptr + offs, out, mask=offs < 1)")
    assert list(one_element_blocks_as_scalars(cst.parse_module(masked))) == []  # `offs` is read otherwise too
    os.environ.setdefault("TRITON_INTERPRET", "1")
    pytest.importorskip("triton")
    outputs = []
    for code in (ONE_ELEMENT, scalar):
        namespace: dict = {}
        exec(compile(code, "<kernel>", "exec"), namespace)
        outputs.append(namespace["out"].tolist())
    assert outputs == [[3.0], [3.0]]
