import libcst as cst

from minimizer.source.passes.kernels import constant_kernel_loads

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
