"""The example bug scripts parse and are as big as their README claims (a rough count of torch operators).

Nothing here runs an example: running them means compiling (tens of seconds each); this only reads them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
import torch

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
HAND_MINIMAL = EXAMPLES / "hand_minimal"

# Each example script and the fewest torch operators it must call, so that a reduction has something to remove.
MIN_OPERATORS = {
    "triton_inplace_grad.py": 10,
    "planted_miscompile.py": 15,
    "planted_miscompile_training.py": 30,
    "planted_crash.py": 15,
    "skew_requires_grad.py": 8,
}

_TORCH_ROOTS = {"torch", "F", "nn"}
# Tensor methods that move, query or drive a tensor rather than compute with it.
_NOT_OPERATORS = {"to", "cpu", "cuda", "item", "tolist", "numel", "dim", "size", "backward", "data_ptr", "apply"}
_TENSOR_METHODS = {name for name in dir(torch.Tensor) if not name.startswith("_")} - _NOT_OPERATORS


def _root_name(node: ast.expr) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def count_torch_operators(source: str) -> int:
    """Count, roughly, the torch operators ``source`` calls.

    A call counts when it is ``torch.*``, ``F.*`` or ``nn.*`` (functions and module constructors alike) or a
    method call whose name is a ``torch.Tensor`` method (``x.view(...)``, ``q.softmax(-1)``). Module calls such
    as ``self.linear(x)`` and arithmetic operators are not counted, so the count is a lower bound.
    """

    count = 0
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
            continue
        if _root_name(node.func) in _TORCH_ROOTS or node.func.attr in _TENSOR_METHODS:
            count += 1
    return count


def test_counter_counts_torch_calls_and_tensor_methods():
    source = "import torch\nh = torch.tanh(F.linear(x, w))\nm = nn.Linear(2, 2)\ny = h.view(-1).softmax(0)\nh.backward()\n"
    assert count_torch_operators(source) == 5


@pytest.mark.parametrize("name", sorted(MIN_OPERATORS))
def test_example_has_enough_operators(name):
    source = (EXAMPLES / name).read_text()
    assert count_torch_operators(source) >= MIN_OPERATORS[name]


@pytest.mark.parametrize("name", sorted(MIN_OPERATORS))
def test_hand_minimal_parses_and_is_smaller(name):
    minimal = (HAND_MINIMAL / name).read_text()
    assert count_torch_operators(minimal) >= 1
    assert count_torch_operators(minimal) < count_torch_operators((EXAMPLES / name).read_text())


@pytest.mark.parametrize("name", sorted(MIN_OPERATORS))
def test_hand_minimal_keeps_the_examples_assert(name):
    # The bug's signature includes an assert's test source, so a hand-minimal repro must keep it verbatim.
    def asserts(source):
        return {ast.unparse(node) for node in ast.walk(ast.parse(source)) if isinstance(node, ast.Assert)}

    original = asserts((EXAMPLES / name).read_text())
    minimal = asserts((HAND_MINIMAL / name).read_text())
    assert minimal <= original


def test_planted_bugs_are_labelled():
    for path in (EXAMPLES / "_planted.py", HAND_MINIMAL / "_planted.py"):
        assert path.read_text().startswith('"""PLANTED BUGS: stand-ins for compiler bugs, for testing minimizer.')


def test_custom_oracle_parses():
    ast.parse((EXAMPLES / "custom_oracle.py").read_text())


def test_the_gpu_example_says_what_it_needs_where_it_cannot_run():
    import subprocess
    import sys

    import torch

    done = subprocess.run([sys.executable, str(EXAMPLES / "liger_distill.py")], capture_output=True, text=True,
                          timeout=300)
    if torch.cuda.is_available():
        pytest.skip("a GPU is here: the example runs for real (bench/liger_gpu.sh)")
    assert done.returncode == 0 and "needs CUDA" in done.stdout and "skipped" in done.stdout
