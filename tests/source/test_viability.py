"""The static screen: candidates certain to fail before the compiler are turned down without a run."""

import pytest

from minimizer.source.viability import Viability

START = """
import torch

def scale(x, factor, *, bias=0.0):
    return x * factor + bias

class Block:
    def __init__(self, width):
        self.width = width

x = torch.randn(4)
block = Block(4)
out = torch.compile(scale)(x, 2.0)
"""


def screen(start=START, compares_calls=True):
    return Viability.of(start, oracle_compares_compiled_calls=compares_calls).why_not


def test_the_start_itself_passes():
    assert screen()(START) is None


@pytest.mark.parametrize(
    "edit",
    [
        ("x = torch.randn(4)\n", ""),  # x still read below
        ("import torch\n", ""),
        ("def scale(x, factor, *, bias=0.0):", "def other(x, factor, *, bias=0.0):"),
    ],
)
def test_reading_a_name_nothing_binds_is_turned_down(edit):
    assert "unbound name" in screen()(START.replace(*edit))


@pytest.mark.parametrize(
    "call",
    [
        "torch.compile(scale)(x)",  # missing factor
        "scale(x, 2.0, 3.0)",  # bias is keyword-only
        "scale(x, 2.0, scale=1)",  # no such parameter
        "scale(x, 2.0, x=x)",  # x given twice
    ],
)
def test_calling_an_own_function_with_arguments_it_cannot_take_is_turned_down(call):
    assert "cannot take" in screen()(START.replace("torch.compile(scale)(x, 2.0)", f"torch.compile(scale)\n{call}"))


@pytest.mark.parametrize(
    "call",
    ["scale(x, 2.0)", "scale(x, factor=2.0, bias=1.0)", "scale(*args)", "scale(x, **options)"],
)
def test_calls_that_can_bind_pass(call):
    start = START + "args, options = (x, 1.0), {}\n"
    assert screen(start)(start + call + "\n") is None


def test_class_arguments_are_checked_against_init_without_self():
    assert "cannot take" in screen()(START.replace("Block(4)", "Block()"))
    assert screen()(START.replace("Block(4)", "Block(width=3)")) is None


def test_a_candidate_that_drops_torch_compile_is_turned_down_only_for_comparing_oracles():
    without = START.replace("torch.compile(scale)", "scale")
    assert screen()(without) == "no longer calls torch.compile"
    assert screen(compares_calls=False)(without) is None


def test_problems_the_start_already_had_are_not_held_against_candidates():
    start = START + "print(injected_elsewhere)\n"
    assert screen(start)(start.replace("block = Block(4)\n", "")) is None
    assert "'x'" in screen(start)(start.replace("x = torch.randn(4)\n", ""))


def test_reading_a_self_attribute_the_class_no_longer_sets_is_turned_down():
    start = START.replace("        self.width = width\n", "        self.width = width\n\n    def wide(self):\n        return self.width * self.scale_of()\n\n    def scale_of(self):\n        return 2\n")
    assert screen(start)(start) is None
    assert "self.width" in screen(start)(start.replace("self.width = width", "width = width"))
    assert "self.scale_of" in screen(start)(start.replace("def scale_of(self)", "def other(self)"))


FUNCTION = """
import torch

def forward(x):
    h = torch.relu(x)
    h = torch.tanh(h)
    with torch.no_grad() as guard:
        y = guard
    return h + y

forward(torch.randn(2))
"""


def test_a_local_read_before_any_assignment_is_turned_down():
    assert screen(FUNCTION)(FUNCTION) is None
    assert screen(FUNCTION)(FUNCTION.replace("    h = torch.relu(x)\n", "")) == "reads unbound name 'h'"


def test_reads_before_assignment_are_not_judged_where_a_loop_could_bind_first():
    looped = FUNCTION.replace("    h = torch.relu(x)\n", "    for _ in range(2):\n        pass\n")
    assert screen(FUNCTION)(looped) is None
