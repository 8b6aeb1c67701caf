"""A failing comparison of a kernel's output pins where each compared tensor comes from (``oracles.compared``)."""

import runpy

import pytest
import torch

from oracles.capture import exception_info
from oracles.kernel_writes import KernelWrites

# `kernel(x, out)` stands for a Triton launch: the harness notes the tensors a launch wrote (here, by hand).
# Outputs start as 7.0, not `torch.empty`: memory an earlier test freed may already hold the very values the
# kernel writes, and a write that changes no byte cannot be told from no write.
SCRIPT = '''
import torch

def kernel(x, out, n=None):
    before = out.clone()
    out.view(-1)[:n].copy_((x.softmax(-1) * 0.5).view(-1)[:n])
    WRITES.note_passed(x)
    WRITES.note_passed(out)
    WRITES.note(out, "row_softmax_kernel", (out == before).view(-1))

{body}
'''


def compared(tmp_path, body, writes=None):
    writes = KernelWrites() if writes is None else writes
    script = tmp_path / "check.py"
    script.write_text(SCRIPT.format(body=body))
    with pytest.raises(AssertionError) as caught:
        runpy.run_path(str(script), init_globals={"WRITES": writes}, run_name="__main__")
    return exception_info(caught.value, str(script), writes).compared


def test_the_kernel_output_and_the_reference_operation_are_named(tmp_path):
    body = (
        "logits = torch.ones(2, 3)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
        "expected = torch.softmax(logits, dim=-1)\ntorch.testing.assert_close(out, expected)\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, softmax"


def test_a_reference_bypassed_to_its_input_is_another_comparison(tmp_path):
    body = (
        "logits = torch.ones(2, 3)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
        "expected = logits\ntorch.testing.assert_close(out, expected)\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, input"


def test_a_reference_computed_from_the_kernel_output_is_another_comparison(tmp_path):
    body = "x = torch.ones(2, 3)\nkernel(x, x)\ntorch.testing.assert_close(x, torch.softmax(x, -1))\n"
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, softmax of kernel row_softmax_kernel"


def test_operands_are_followed_through_the_script_functions_that_return_them(tmp_path):
    body = (
        "def reference(t):\n    probs = t.softmax(-1)\n    return probs\n\n"
        "def check():\n    x = torch.ones(2, 3)\n    out = torch.full_like(x, 7.0)\n    kernel(x, out)\n"
        "    assert torch.allclose(out, reference(x))\n\ncheck()\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, softmax"


def test_conversions_are_looked_through(tmp_path):
    body = (
        "logits = torch.ones(2, 3)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
        "expected = torch.softmax(logits, dim=-1)\ntorch.testing.assert_close(out.cpu().float(), expected.detach().cpu())\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, softmax"
    bypassed = body.replace("torch.softmax(logits, dim=-1)", "logits")
    assert compared(tmp_path, bypassed) == "kernel row_softmax_kernel, input"


def test_an_assert_with_a_comparison_names_both_sides(tmp_path):
    body = "x = torch.ones(3)\nout = torch.zeros(3)\nkernel(x, out)\nassert out.sum().item() == x.exp().sum().item()\n"
    assert compared(tmp_path, body) == "sum of kernel row_softmax_kernel, exp+sum"


RMS_REFERENCE = (
    "def reference(x, w, eps=1e-6):\n    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w\n\n"
    "x, w = torch.ones(2, 3), torch.full((3,), 2.0)\nout = torch.full_like(x, 7.0)\nkernel(x, out)\n"
)


def test_every_operation_of_the_reference_is_pinned_not_only_the_outermost(tmp_path):
    body = RMS_REFERENCE + "torch.testing.assert_close(out, reference(x, w))\n"
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, add+mean+mul+mul+pow+rsqrt"
    inlined = RMS_REFERENCE + "torch.testing.assert_close(out, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w)\n"
    assert compared(tmp_path, inlined) == "kernel row_softmax_kernel, add+mean+mul+mul+pow+rsqrt"
    in_steps = RMS_REFERENCE + "ms = x.pow(2).mean(-1, keepdim=True)\nref = x * torch.rsqrt(ms + 1e-6)\nref = ref * w\nassert torch.allclose(out, ref)\n"
    assert compared(tmp_path, in_steps) == "kernel row_softmax_kernel, add+mean+mul+mul+pow+rsqrt"
    gutted = RMS_REFERENCE + "torch.testing.assert_close(out, x * torch.rsqrt(x) * w)\n"
    assert compared(tmp_path, gutted) == "kernel row_softmax_kernel, mul+mul+rsqrt"


def test_operators_are_named_as_the_run_names_them(tmp_path):
    # The run's reading (oracles.evidence) names `a * b` by the torch operation it runs, `mul`; a static reading
    # that said `mult` gave a test lifted out of its class (read statically) another signature than the class.
    body = RMS_REFERENCE + "assert torch.allclose(out, -(x / w) * 2 // 1 % 3)\n"
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, div+floor_divide+mul+neg+remainder"


def test_a_reference_that_reads_the_kernel_output_anywhere_is_another_comparison(tmp_path):
    # The kernel writes into its own input, and the reference reads it: in a binary operation, or passed to a
    # script function.
    body = RMS_REFERENCE.replace("kernel(x, out)", "kernel(x, x)") + "torch.testing.assert_close(x, x * w)\n"
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, mul of kernel row_softmax_kernel"
    called = RMS_REFERENCE.replace("kernel(x, out)", "kernel(x, x)") + "torch.testing.assert_close(x, reference(x, w))\n"
    assert compared(tmp_path, called) == (
        "kernel row_softmax_kernel, add+mean+mul+mul+pow+rsqrt of kernel row_softmax_kernel"
    )


def test_names_the_script_chose_are_not_operations(tmp_path):
    # `scale` may be renamed or inlined by a reduction; only torch's own names count.
    body = (
        "scale = torch.exp\nx = torch.ones(2, 3)\nout = torch.full_like(x, 7.0)\nkernel(x, out)\n"
        "torch.testing.assert_close(out, scale(x))\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, input"


def test_the_script_modules_are_followed_into_forward_and_their_methods(tmp_path):
    body = (
        "class Net(torch.nn.Module):\n    def query(self, t):\n        return t.exp()\n\n"
        "    def forward(self, t):\n        return self.query(t) * 2\n\n"
        "net = Net()\nx = torch.ones(2, 3)\nout = torch.full_like(x, 7.0)\nkernel(x, out)\n"
    )
    assert compared(tmp_path, body + "torch.testing.assert_close(out, net.query(x))\n") == "kernel row_softmax_kernel, exp"
    assert compared(tmp_path, body + "torch.testing.assert_close(out, Net()(x))\n") == "kernel row_softmax_kernel, exp+mul"
    assert compared(tmp_path, body + "ref = net\ntorch.testing.assert_close(out, ref(x))\n") == (
        "kernel row_softmax_kernel, exp+mul"
    )


# A module that runs the kernel or torch by a flag, and a check that compares its two paths: the bias + GELU
# MLP whose reduction once compared the module with its own input (`[compared: input, input]` pinned nothing).
FLAGGED = """
class jit:
    def __init__(self, fn):
        self.fn = fn

    def __getitem__(self, grid):
        return self.fn

@jit
def softmax_kernel(x_ptr, out_ptr):
    kernel(x_ptr, out_ptr)
    WRITES.note_parameters("softmax_kernel", ["out_ptr"])

class Model(torch.nn.Module):
    def forward(self, x, fused=True):
        if fused:
            out = torch.full_like(x, 7.0)
            softmax_kernel[(1,)](x, out)
        else:
            out = x.softmax(-1)
        return out * 2

def check(model, x):
    assert torch.allclose({got}, {want})

check(Model(), torch.ones(2, 3))
"""


def test_literal_arguments_choose_the_path_followed_and_a_launch_names_its_output(tmp_path):
    both = FLAGGED.format(got="model(x)", want="model(x, fused=False)")
    assert compared(tmp_path, both) == "mul of kernel softmax_kernel, mul+softmax"
    same_path = FLAGGED.format(got="model(x)", want="model(x, fused=True) + 1")
    assert compared(tmp_path, same_path) == "mul of kernel softmax_kernel, add+mul of kernel softmax_kernel"
    against_its_input = FLAGGED.format(got="Model()(x)", want="x")
    assert compared(tmp_path, against_its_input) == "mul of kernel softmax_kernel, input"


def test_nothing_is_pinned_without_a_kernel_write(tmp_path):
    body = "x = torch.ones(3)\ntorch.testing.assert_close(x, torch.softmax(x, -1))\n"
    assert compared(tmp_path, body) is None


def test_a_kernel_output_that_differs_where_the_kernel_did_not_write_is_marked(tmp_path):
    whole = "x = torch.ones(4)\nout = torch.full((4,), 7.0)\nkernel(x, out)\ntorch.testing.assert_close(out, x.softmax(-1))\n"
    assert compared(tmp_path, whole) == "kernel row_softmax_kernel, softmax"
    part = whole.replace("kernel(x, out)", "kernel(x, out, 1)")
    assert compared(tmp_path, part) == "kernel row_softmax_kernel, differing where it did not write, softmax"
    names = part.replace("torch.testing.assert_close(out, x.softmax(-1))", "ref = x.softmax(-1)\nassert torch.equal(out, ref)")
    assert compared(tmp_path, names) == "kernel row_softmax_kernel, differing where it did not write, softmax"
    # A reference of one element broadcast over the output is compared with the unwritten elements too
    # (generated seed 261: a kernel launched on one element of a two-element output, against `shift` of one).
    broadcast = "x = torch.ones(1)\nout = torch.ones(2)\nkernel(x, out, 1)\nref = x * 3\nassert torch.allclose(out, ref)\n"
    assert compared(tmp_path, broadcast) == "kernel row_softmax_kernel, differing where it did not write, mul"


def test_a_dead_tensor_no_longer_counts_as_written():
    writes = KernelWrites()
    kept, dropped = torch.ones(2), torch.ones(2)
    writes.note(kept, "a")
    writes.note(dropped, "b")
    storage_view = kept[1:]
    assert writes.writer_of(storage_view) == "a"  # a view of what the kernel wrote
    del dropped
    assert writes.writer_of(torch.ones(2)) is None


def test_a_write_through_a_view_that_died_still_marks_the_tensor_sharing_its_storage(tmp_path):
    # The helper's view `flat` is gone when the assert runs; `x` shares its storage, so the reference reads
    # the kernel's output (the kernel wrote into its input).
    body = (
        "def normalize(x):\n    flat = x.reshape(-1)\n    kernel(flat, flat)\n    return flat.reshape(x.shape)\n\n"
        "x = torch.ones(2, 3)\ntorch.testing.assert_close(normalize(x), x * 2)\n"
    )
    assert compared(tmp_path, body) == "kernel row_softmax_kernel, mul of kernel row_softmax_kernel"



def compared_values(tmp_path, body, told="compared_values"):
    script = tmp_path / "check.py"
    script.write_text(SCRIPT.format(body=body))
    writes = KernelWrites()
    with pytest.raises(AssertionError) as caught:
        runpy.run_path(str(script), init_globals={"WRITES": writes}, run_name="__main__")
    return getattr(exception_info(caught.value, str(script), writes), told)


def test_how_the_values_compared_differ_is_told_whatever_both_sides_add_alike(tmp_path):
    launch = "logits = torch.ones(2, 3)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
    differs = compared_values(tmp_path, launch + "torch.testing.assert_close(out, torch.zeros(2, 3))\n", "compared_difference")
    both_shifted = compared_values(
        tmp_path, launch + "torch.testing.assert_close(out + 0.5, torch.zeros(2, 3) + 0.5)\n", "compared_difference"
    )
    other = compared_values(tmp_path, launch + "torch.testing.assert_close(out, torch.ones(2, 3))\n", "compared_difference")
    assert differs is not None and differs == both_shifted and other != differs


def test_the_values_compared_are_told_by_a_digest_of_their_bytes(tmp_path):
    launch = "logits = torch.ones(2, 3)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
    digest = compared_values(tmp_path, launch + "torch.testing.assert_close(out, torch.softmax(logits, -1))\n")
    inlined = compared_values(tmp_path, launch + "ref = logits.softmax(-1)\ntorch.testing.assert_close(out, ref)\n")
    other = compared_values(tmp_path, launch + "torch.testing.assert_close(out, torch.softmax(logits + torch.arange(3), -1))\n")
    # torch.allclose is no Python frame: its operands are computed again, where that launches nothing.
    by_allclose = compared_values(tmp_path, launch + "assert torch.allclose(out, logits.softmax(-1))\n")
    relaunching = compared_values(tmp_path, launch + "assert torch.allclose(out, kernel(logits, out) or logits)\n")
    assert digest is not None and len(digest) == 12
    assert inlined == digest == by_allclose  # the same numbers, however the script spells them
    assert other != digest
    assert relaunching is None


def test_the_module_tensors_at_the_failure_are_recorded(tmp_path):
    script = tmp_path / "check.py"
    body = "logits = torch.ones(2, 3, requires_grad=True)\nout = torch.full_like(logits, 7.0)\nkernel(logits, out)\n"
    script.write_text(SCRIPT.format(body=body + "torch.testing.assert_close(out, logits)\n"))
    writes = KernelWrites()
    with pytest.raises(AssertionError) as caught:
        runpy.run_path(str(script), init_globals={"WRITES": writes}, run_name="__main__")
    recorded = {entry[0]: entry[1:] for entry in exception_info(caught.value, str(script), writes).module_tensors}
    assert recorded["logits"] == ([2, 3], "torch.float32", "cpu", True)
    assert recorded["out"][:3] == ([2, 3], "torch.float32", "cpu")
    assert exception_info(caught.value, str(script), None).module_tensors == ()  # a compiled side's: not asked


def test_the_runs_reading_marks_a_kernel_output_differing_where_it_did_not_write():
    from oracles.comparison import Operand
    from oracles.compared import marked_where_unwritten

    writes = KernelWrites()
    out, shift = torch.tensor([0.5, 1.0]), torch.tensor([0.5])
    writes.note(out, "scale_shift_kernel", torch.tensor([False, True]))  # the second element was not written
    operands = (Operand("kernel scale_shift_kernel", "float32 [2]"), Operand("input", "float32 [1]"))
    marked = marked_where_unwritten(operands, (out, shift), writes)
    assert marked[0].origin == "kernel scale_shift_kernel, differing where it did not write" and marked[1] == operands[1]
    assert marked_where_unwritten(operands, (out, torch.tensor([0.5, 1.0])), writes) == operands
