"""Kernels whose output the pinned comparison checks stay as they are (``minimizer.source.frozen``)."""

from minimizer.source.frozen import FrozenKernels, GuardedMasks
from oracles.bug import Bug
from oracles.compared import kernels_compared


def _bug(kernels: tuple, compared: str | None = None, strays: tuple = ()) -> Bug:
    """The ``script`` oracle's bug of a failed check of the script's kernels."""

    return Bug("AssertionError: x", exception="AssertionError", kernels=kernels, compared=compared,
               compared_kernels=kernels_compared(compared), strays=strays)

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
SIGNATURE = _bug(('k',), 'kernel k, softmax')


def test_the_compared_kernels_are_read_from_the_comparisons_operands():
    assert kernels_compared("kernel k, softmax") == ("k",)
    assert kernels_compared(None) == ()
    assert kernels_compared("kernel a, softmax of kernel b, kernel c") == ("a", "b", "c")


def test_a_candidate_that_edits_a_compared_kernel_is_turned_down_and_one_that_edits_around_it_is_not():
    frozen = FrozenKernels.of(START, SIGNATURE)
    gutted = START.replace("x / tl.sum(x, axis=0)", "0.0")
    assert frozen.why_not(gutted) == "changes the kernel k, whose output the failing comparison checks"
    assert frozen.why_not(START.replace("x * 2", "x").replace("torch.ones(3)", "torch.ones(1)")) is None
    reformatted = START.replace("mask=offsets < n, other=0.0", "mask=(offsets < n), other=0.0")
    assert frozen.why_not(reformatted) is None  # the same code
    assert frozen.why_not(START.replace("@triton.jit\ndef k(", "@triton.jit\ndef kk(")) is not None


def test_without_a_compared_kernel_nothing_is_frozen():
    frozen = FrozenKernels.of(START, _bug(('k',), None))
    assert frozen.why_not(START.replace("x / tl.sum(x, axis=0)", "0.0")) is None


RMS = '''import triton


@triton.jit
def rms(x_ptr, w_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    cols = tl.arange(0, BLOCK)
    mask = cols <= n
    x = tl.load(x_ptr + cols, mask=mask, other=0.0)
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    tl.store(out_ptr + cols, x / tl.sqrt(tl.sum(x * x, axis=0) / n + eps) * w, mask=cols < n)
'''
RMS_SIGNATURE = _bug(('rms',), 'kernel rms, mult', strays=('rms reads 1 past x_ptr',))


def test_with_the_values_held_a_compared_kernel_may_shrink_but_keeps_its_masks_and_masked_values():
    guarded = GuardedMasks.of(RMS, RMS_SIGNATURE)
    weightless = RMS.replace("    w = tl.load(w_ptr + cols, mask=mask, other=0.0)\n", "").replace(" * w,", ",")
    assert guarded.why_not(weightless.replace("w_ptr, ", "").replace(" + eps", "").replace("eps, ", "")) is None
    assert guarded.why_not(RMS.replace("    mask = cols <= n\n", "").replace("mask=mask", "mask=cols <= n")) is None
    unmasked = RMS.replace("x = tl.load(x_ptr + cols, mask=mask, other=0.0)", "x = tl.load(x_ptr + cols)")
    assert guarded.why_not(unmasked) == "changes a mask of rms or what its masked loads read"
    assert guarded.why_not(RMS.replace("mask = cols <= n", "mask = cols <= 1")) is not None
    assert guarded.why_not(RMS.replace("mask=cols < n)", "mask=None)")) is not None
    assert guarded.why_not(RMS.replace("other=0.0", "other=1.0", 1)) is not None  # the other load still says 0.0
    assert GuardedMasks.of(RMS, _bug(('rms',), None)).why_not(unmasked) is None
    assert guarded.why_not(RMS.replace("mask=cols < n)", "cols < n)")) is not None  # given as it was given


TAIL_FENCED = RMS.replace(", other=0.0", "")


def test_a_mask_that_only_fences_the_launchs_tail_is_not_held():
    # No masked load says what its masked lanes read, and the kernel never reached out of bounds: with the values
    # held, a live mask changes them when it goes; one that was not live is no line of the failure.
    unmasked = TAIL_FENCED.replace("x = tl.load(x_ptr + cols, mask=mask)", "x = tl.load(x_ptr + cols)")
    assert GuardedMasks.of(TAIL_FENCED, _bug(('rms',), 'kernel rms, mult')).why_not(unmasked) is None
    assert GuardedMasks.of(TAIL_FENCED, RMS_SIGNATURE).why_not(unmasked) is not None  # it reached past x_ptr
    other_kernel = RMS_SIGNATURE.with_(strays=("norm reads 1 past x_ptr",))
    assert GuardedMasks.of(TAIL_FENCED, other_kernel).why_not(unmasked) is None


SHIFT = '''import triton


@triton.jit
def shift_rows(x_ptr, scale_ptr, shift_ptr, out_ptr, n, n_cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    cols = offs % n_cols
    x = tl.load(x_ptr + offs)
    scale = tl.load(scale_ptr + cols)
    shift = tl.load(shift_ptr + offs // n_cols)
    tl.store(out_ptr + offs, x * scale + shift)
'''
SHIFT_SIGNATURE = _bug(('shift_rows',), 'kernel shift_rows, add')


def test_a_row_or_column_address_stays_while_its_load_does_though_over_one_row_a_plainer_one_reads_the_same():
    guarded = GuardedMasks.of(SHIFT, SHIFT_SIGNATURE)
    # Over one row `offs // n_cols` is 0: the bug's line, and `shift_ptr` alone would read the same.
    assert guarded.why_not(SHIFT.replace("shift_ptr + offs // n_cols", "shift_ptr")) == (
        "changes the row or column shift_rows reads or writes"
    )
    assert guarded.why_not(SHIFT.replace("cols = offs % n_cols", "cols = offs")) is not None
    # What places the program, a load that goes whole, and loads of plain addresses may change.
    one_program = SHIFT.replace("tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)", "tl.arange(0, BLOCK)")
    scaleless = one_program.replace("    scale = tl.load(scale_ptr + cols)\n", "").replace("x * scale", "x")
    assert guarded.why_not(scaleless.replace("x_ptr + offs", "x_ptr")) is None
    assert GuardedMasks.of(SHIFT.replace("offs // n_cols", "offs"), SHIFT_SIGNATURE).why_not(
        SHIFT.replace("offs // n_cols", "offs").replace("shift_ptr + offs", "shift_ptr")
    ) is None


def test_a_mask_computed_and_never_given_is_held_where_the_kernel_reached_out_of_bounds():
    # The bug is the load without `mask=mask`: its fix reads the line a reduction would drop as dead.
    missing = RMS.replace("x = tl.load(x_ptr + cols, mask=mask, other=0.0)", "x = tl.load(x_ptr + cols)")
    missing = missing.replace("w = tl.load(w_ptr + cols, mask=mask, other=0.0)", "w = tl.load(w_ptr + cols)")
    dead_gone = missing.replace("    mask = cols <= n\n", "")
    assert GuardedMasks.of(missing, RMS_SIGNATURE).why_not(dead_gone) is not None
    assert GuardedMasks.of(missing, _bug(('rms',), 'kernel rms, mult')).why_not(dead_gone) is None


LAYER_SCALE = '''import triton


@triton.jit
def layer_scale(x_ptr, gamma_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * n_cols + cols)
    gamma = tl.load(gamma_ptr + cols * 0)
    tl.store(out_ptr + row * n_cols + cols, x * gamma)
'''


def test_an_address_that_reads_one_element_for_every_lane_stays():
    # check_sys_exit_kernel on CUDA: `gamma_ptr + cols * 0` became `gamma_ptr`, a scalar load broadcast, which
    # computes the bug's values and every value the replay holds, but is not the line its fix mends.
    guarded = GuardedMasks.of(LAYER_SCALE, _bug(('layer_scale',), 'kernel layer_scale, mul'))
    assert guarded.why_not(LAYER_SCALE.replace("gamma_ptr + cols * 0", "gamma_ptr")) is not None
    zero = LAYER_SCALE.replace("    gamma = tl.load(gamma_ptr + cols * 0)\n", "    lane = cols * 0\n    gamma = tl.load(gamma_ptr + lane)\n")
    assert GuardedMasks.of(zero, _bug((), "kernel layer_scale, mul")).why_not(zero.replace("gamma_ptr + lane", "gamma_ptr")) is not None
    assert guarded.why_not(LAYER_SCALE.replace("row * n_cols + ", "")) is None


# The scale meant per column, read per row.
PER_ROW_SCALE = LAYER_SCALE.replace("gamma_ptr + cols * 0", "gamma_ptr + row")


def test_an_address_that_reads_one_element_per_program_stays():
    # A program written after the code (a unittest of a residual kernel): the scale meant per column was read per
    # row, `scale_ptr + row`; over one row it became `scale_ptr`, which the fix's line no longer names.
    guarded = GuardedMasks.of(PER_ROW_SCALE, _bug((), "kernel layer_scale, mul"))
    assert guarded.why_not(PER_ROW_SCALE.replace("gamma_ptr + row)", "gamma_ptr)")) is not None
    # The rows of the lane addresses may still go over one row, and the load of the scale may go whole.
    assert guarded.why_not(PER_ROW_SCALE.replace("row * n_cols + ", "")) is None
    scaleless = PER_ROW_SCALE.replace("    gamma = tl.load(gamma_ptr + row)\n", "").replace("x * gamma", "x")
    assert guarded.why_not(scaleless) is None


def test_a_kernel_that_stored_what_it_loaded_may_not_store_a_constant_instead():
    # Generated seed 643 reduced again: over two elements `shift_ptr + offs // n_cols` reads shift[0], 0.0 for
    # both lanes, so `shift = 0.0` held every value; the kernel then stored a constant, which no fix mends.
    guarded = GuardedMasks.of(SHIFT, SHIFT_SIGNATURE)
    constant = SHIFT.replace("tl.load(shift_ptr + offs // n_cols)", "0.0").replace("x * scale + shift", "shift")
    assert guarded.why_not(constant) == "makes shift_rows store what it did not load"
    assert guarded.why_not(SHIFT.replace("x * scale + shift", "shift")) is None
