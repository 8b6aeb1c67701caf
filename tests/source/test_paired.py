import libcst as cst

from minimizer.source.passes.statements.dead_code import remove_unused_definitions
from minimizer.source.passes.kernels.paired import bypass_alike_operators, kernel_bodies_kept
from tests.source.helpers import check_candidates_are_valid_and_not_larger

KERNEL = '''import triton
import triton.language as tl


@triton.jit
def k(x_ptr, scale_ptr, shift_ptr, out_ptr, n_cols):
    offs = tl.arange(0, 2)
    cols = offs % n_cols
    x = tl.load(x_ptr + offs)
    scale = tl.load(scale_ptr + cols)
    shift = tl.load(shift_ptr + offs // n_cols)
    tl.store(out_ptr + offs, x * scale + shift)


'''


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in bypass_alike_operators(cst.parse_module(code))]


def test_an_operation_both_sides_apply_alike_goes_from_both_with_the_loads_left_unread():
    code = KERNEL + "k[1,](x, scale, shift, out, 2)\nassert torch.allclose(out, x * scale + shift)\n"
    found = candidates(code)
    assert found[0] == code.replace("    x = tl.load(x_ptr + offs)\n    scale = tl.load(scale_ptr + cols)\n", "").replace(
        "x * scale + shift", "shift"
    )
    assert "    cols = offs % n_cols\n" in found[0]  # only loads go with the edit: a fix may read `cols`
    assert "tl.store(out_ptr + offs, x * scale)" in found[1] and "allclose(out, x * scale)" in found[1]
    # The inner product, both ways.
    assert "tl.store(out_ptr + offs, scale + shift)" in found[2] and "allclose(out, scale + shift)" in found[2]


def test_a_kernel_operand_may_be_an_expression_in_the_reference():
    # The script launches the kernel on `x * 0.5` and writes that inline in its reference.
    code = KERNEL + "k[1,](x * 0.5, scale, shift, out, 2)\nassert torch.allclose(out, x * 0.5 * scale + shift)\n"
    found = candidates(code)
    assert "tl.store(out_ptr + offs, shift)" in found[0] and "allclose(out, shift)" in found[0]
    assert any("tl.store(out_ptr + offs, x + shift)" in c and "allclose(out, (x * 0.5) + shift)" in c for c in found)
    # The other way round, an operand of the reference stands for no operation of the kernel.
    assert candidates(KERNEL.replace("x * scale + shift", "x * 2 * scale + shift") + "assert torch.allclose(out, x * s + t)\n") == []


def test_a_reference_inside_the_error_measured_is_paired():
    # Generated seed 376: `sys.exit(1)` where the largest error is above 0, the reference written in the error.
    code = KERNEL + "k[1,](x, scale, shift, out, 2)\nif (out - (x * scale + shift)).abs().max() > 0.0:\n    sys.exit(1)\n"
    found = candidates(code)
    assert "tl.store(out_ptr + offs, shift)" in found[0] and "(out - shift).abs()" in found[0]


def test_an_operand_that_changes_nothing_is_no_operation_of_the_reference():
    # check_max_error_loop_kernel: the kernel's `x * slope` paired with the script's `batch * 1`; dropping `1`
    # changes nothing outside, and the kernel alone came to compute the identity.
    code = KERNEL.replace("x * scale + shift", "x * scale") + "k[1,](x, scale, shift, out, 2)\nassert (out - x * 1).max() < 1\n"
    found = candidates(code)
    assert len(found) == 1 and "tl.store(out_ptr + offs, scale)" in found[0]  # `1` kept, `x` dropped: a change
    assert len(candidates(code.replace("x * 1", "x * 2"))) == 2  # an operand that changes something still pairs


def test_expressions_written_with_other_operators_are_not_paired():
    code = KERNEL + "k[1,](x, scale, shift, out, 2)\nassert torch.allclose(out, x * (scale + shift))\n"
    assert candidates(code) == []
    assert candidates("def f(x):\n    return x * 2 + 1\ny = f(1) * 3 + 1\n") == []  # no kernel


def test_an_operand_kept_inside_another_operator_keeps_its_precedence():
    code = KERNEL.replace("x * scale + shift", "(x - scale) * shift") + "assert torch.allclose(out, (h - s) * t)\n"
    assert any("tl.store(out_ptr + offs, (x - scale))" in c or "tl.store(out_ptr + offs, x - scale)" in c for c in candidates(code))
    nested = KERNEL.replace("x * scale + shift", "(x - scale + 1) * shift") + "assert torch.allclose(out, (h - s + 1) * t)\n"
    assert any("tl.store(out_ptr + offs, (x - scale) * shift)" in c and "allclose(out, (h - s) * t)" in c for c in candidates(nested))


def test_candidates_are_valid_and_not_larger():
    code = KERNEL + "k[1,](x, scale, shift, out, 2)\nassert torch.allclose(out, x * scale + shift)\n"
    check_candidates_are_valid_and_not_larger(code, bypass_alike_operators)


def test_a_pass_kept_from_kernel_bodies_leaves_their_lines():
    code = KERNEL.replace("    x = tl.load(x_ptr + offs)\n", "") + "unused = 1\nk[1,](x, scale, shift, out, 2)\n"
    kept = [c.code for c in kernel_bodies_kept(remove_unused_definitions)(cst.parse_module(code))]
    assert kept and all("cols = offs % n_cols" in c for c in kept) and any("unused" not in c for c in kept)
