"""Kernels whose output the pinned comparison checks stay as they are (``minimizer.source.frozen``)."""

from minimizer.source.frozen import FrozenKernels, compared_kernels

START = '''import triton


@triton.jit
def k(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(out_ptr + offsets, x / tl.sum(x, axis=0), mask=offsets < n)


def helper(x):
    return x * 2


x = torch.ones(3)
'''
SIGNATURE = "AssertionError: Tensor-likes are not close! [kernels: k] [compared: kernel k, softmax]"


def test_the_compared_kernels_are_read_from_the_signature():
    assert compared_kernels(SIGNATURE) == ["k"]
    assert compared_kernels("AssertionError: x [kernels: k]") == []
    assert compared_kernels("... [compared: kernel a, softmax of kernel b, kernel c]") == ["a", "b", "c"]


def test_a_candidate_that_edits_a_compared_kernel_is_turned_down_and_one_that_edits_around_it_is_not():
    frozen = FrozenKernels.of(START, SIGNATURE)
    gutted = START.replace("x / tl.sum(x, axis=0)", "0.0")
    assert frozen.why_not(gutted) == "changes the kernel k, whose output the failing comparison checks"
    assert frozen.why_not(START.replace("x * 2", "x").replace("torch.ones(3)", "torch.ones(1)")) is None
    reformatted = START.replace("mask=offsets < n, other=0.0", "mask=(offsets < n), other=0.0")
    assert frozen.why_not(reformatted) is None  # the same code
    assert frozen.why_not(START.replace("@triton.jit\ndef k(", "@triton.jit\ndef kk(")) is not None


def test_without_a_compared_kernel_nothing_is_frozen():
    frozen = FrozenKernels.of(START, "AssertionError: x [kernels: k]")
    assert frozen.why_not(START.replace("x / tl.sum(x, axis=0)", "0.0")) is None
