"""The lift's question on source text: is the failing compiled call buried where no statement can state it?"""

import pytest

from minimizer.stages.lift import is_buried
from minimizer.stages.pin import Target
from oracles.bug import Bug
from tests.bugs import ONLY, check_failed

NUMERICAL = Target("numerical", "numerical: float32 value")

SHAPES = {
    "a training function rebinding a module-level helper": """
import torch
def step(x):
    return torch.sin(x)
def train():
    global step
    step = torch.compile(step)
    for _ in range(3):
        loss = step(torch.ones(2)).sum()
    return loss
assert train() > 0
""",
    "an evaluation loop over a table of cases": """
import itertools
import torch
CASES = {"sin": torch.sin, "cos": torch.cos}
problems = []
for (name, fn), dtype in itertools.product(CASES.items(), [torch.float32, torch.float64]):
    x = torch.ones(2, dtype=dtype)
    if not torch.allclose(torch.compile(fn)(x), fn(x)):
        problems.append(name)
assert not problems
""",
    "a compiled model called in a comprehension inside a helper": """
import torch
def evaluate(model, batches):
    return [model(b) for b in batches]
model = torch.nn.Linear(2, 2)
outs = evaluate(torch.compile(model), [torch.ones(1, 2)])
assert all(torch.allclose(a, b) for a, b in zip(outs, evaluate(model, [torch.ones(1, 2)])))
""",
    "a method bound to an attribute, called through functools.partial": """
import functools
import torch
class Trainer:
    def __init__(self):
        self.step = torch.compile(self._step)
    def _step(self, x, scale):
        return torch.sin(x) * scale
    def fit(self):
        step = functools.partial(self.step, scale=2.0)
        return [step(torch.ones(2)) for _ in range(2)]
assert Trainer().fit()[0].sum() > 0
""",
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_buried_call_is_lifted(shape):
    assert is_buried(SHAPES[shape], NUMERICAL)


def test_a_call_at_module_level_is_reduced_as_it_is():
    text = "import torch\nx = torch.ones(2)\nout = torch.compile(torch.sin)(x)\nassert out.sum() > 0\n"
    assert not is_buried(text, NUMERICAL)


def test_a_script_whose_failing_run_compiled_nothing_is_not_lifted():
    # Its own Triton kernel checked against torch; "compile" is in the text, in a docstring and a helper's name.
    text = SHAPES["a training function rebinding a module-level helper"]
    kernel_only = check_failed(kernels=("k",), comparison="allclose of kernel k, add")
    assert not is_buried(text, Target("script", kernel_only))
    assert is_buried(text, Target("script", kernel_only.with_(under_compile=ONLY)))


def test_bugs_no_captured_graph_can_show_are_not_lifted():
    text = SHAPES["a training function rebinding a module-level helper"]
    assert not is_buried(text, Target("inplace", "inplace: TanhBackward0"))
    assert not is_buried(text, Target("hang", "hang: a compiled call did not finish"))


def test_a_crash_in_dynamos_tracing_leaves_no_graph_to_lift():
    text = SHAPES["a training function rebinding a module-level helper"]
    def crash(exception: str, stage: str | None = None) -> Target:
        return Target("crash", Bug(f"crash: compiled raised: {exception}: x", exception=exception, raised_by="compiled", stage=stage))

    assert not is_buried(text, crash("torch._dynamo.exc.TorchRuntimeError"))
    assert not is_buried(text, crash("RuntimeError", "dynamo-tracing"))
    assert is_buried(text, crash("RuntimeError", "inductor-lowering"))
    # A custom backend that raised was handed its graph: Dynamo wraps its error, the graph shows it.
    assert is_buried(text, crash("torch._dynamo.exc.BackendCompilerFailed", "backend-compile"))


def test_bugs_the_lifted_comparison_cannot_show_are_reduced_as_they_are():
    text = SHAPES["a training function rebinding a module-level helper"]
    reverse = Bug("crash: eager raised: RuntimeError: matN and matN must have the same dtype", raised_by="eager")
    assert not is_buried(text, Target("crash", reverse))
    outside = check_failed("RuntimeError: The differentiated Tensor at index N appears to not have been used", under=ONLY)
    assert not is_buried(text, Target("script", outside))
    assert is_buried(text, Target("script", check_failed("AssertionError: assert not problems", under=ONLY)))


def test_a_script_that_compiles_nothing_has_nothing_to_lift():
    assert not is_buried("import torch\ndef f():\n    return torch.ones(1)\nassert f().sum() > 5\n", NUMERICAL)


LIBRARY_MODEL = """
import torch
from transformers import GPT2Config, GPT2LMHeadModel
model = GPT2LMHeadModel(GPT2Config(n_layer=2, n_embd=64, n_head=4))
ids = torch.randint(0, 100, (2, 8))
out = torch.compile(model, backend="deploy")(ids).logits
torch.testing.assert_close(out, model(ids).logits)
"""


def test_a_module_level_call_of_a_library_model_is_lifted_when_its_graphs_hold_far_more_than_the_script_shows():
    from minimizer.stages.lift import lives_elsewhere

    assert not is_buried(LIBRARY_MODEL, NUMERICAL)
    assert lives_elsewhere(LIBRARY_MODEL, 180, NUMERICAL)
    assert not lives_elsewhere(LIBRARY_MODEL, 6, NUMERICAL)  # the graph is what the script shows
    assert not lives_elsewhere(LIBRARY_MODEL, None, NUMERICAL)  # not measured
    assert not lives_elsewhere(LIBRARY_MODEL, 180, Target("inplace", "inplace: x"))  # no graph shows it



def test_a_raise_of_the_scripts_own_check_is_lifted_as_an_assert_is():
    text = SHAPES["a training function rebinding a module-level helper"]
    raised = check_failed("RuntimeError: epoch N: bootstrapped targets still require grad", under=ONLY)
    assert is_buried(text, Target("script", raised, by_a_check=True))  # `if not stats[...]: raise ...`
    assert not is_buried(text, Target("script", raised))  # raised by something the script called
