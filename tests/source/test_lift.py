"""The source lift on source text, with calls as the capture run records them."""

import dataclasses

import torch

from minimizer.graph.call_record import Argument, RecordedCall, argument
from minimizer.graph.case import CompileCall, InputSpec
from minimizer.source.lift import lifted_bug, lifted_program
from oracles.api import Verdict
from oracles.bug import ALSO_WITHOUT_COMPILE as ALSO
from oracles.bug import ONLY_UNDER_COMPILE as ONLY
from oracles.bug import Bug

SCRIPT = '''
import logging
from dataclasses import dataclass

import dataclasses

import torch

log = logging.getLogger("train")
SCALE = 2.0


def pad(features, width):
    padded = features.new_zeros(features.shape[0], width)
    padded[:, : features.shape[1]] = features * SCALE
    return padded if padded.requires_grad else padded.detach()


@dataclass
class Estimator:
    gamma: float = 0.9

    @torch.compile(backend="eager")
    def targets(self, rewards):
        out = rewards * self.gamma
        out.detach_()
        return out, out.requires_grad


def my_backend(gm, example_inputs):
    return gm.forward


def train():
    global pad
    pad = torch.compile(pad, backend=my_backend)
    log.info("%s", pad(torch.randn(4, 3, requires_grad=True), width=8))


if __name__ == "__main__":
    train()
'''

FEATURES = Argument("tensor", spec=InputSpec("features", shape=(4, 3), requires_grad=True))


def _call(target, args, kwargs=(), backend="__main__:my_backend", grad_enabled=True):
    return RecordedCall(target, "__main__", tuple(args), tuple(kwargs), CompileCall(backend=backend), grad_enabled)


def test_a_function_rebound_compiled_in_a_training_function_is_called_once_at_module_level():
    program = lifted_program(SCRIPT, _call("pad", [FEATURES], [("width", Argument("literal", "8"))]), check=False)
    assert "def pad(features, width):" in program and "SCALE = 2.0" in program  # with what it reads
    assert "def my_backend(gm, example_inputs):" in program  # the script's backend it compiles with
    assert "def train" not in program and "class Estimator" not in program and "__main__" not in program
    assert program.rstrip().endswith(
        "features = torch.randn(4, 3, requires_grad=True)\n"
        "out = torch.compile(pad, backend=my_backend)(features, width=8)"
    )
    compile(program, "lifted", "exec")


def test_a_decorated_method_of_a_dataclass_is_compiled_by_the_call_not_its_decorator():
    estimator = Argument("object", "Estimator", fields=(("gamma", Argument("literal", "0.9")),))
    rewards = Argument("tensor", spec=InputSpec("rewards", shape=(5,), requires_grad=True))
    program = lifted_program(SCRIPT, _call("Estimator.targets", [estimator, rewards], backend="eager"), check=True)
    assert "@dataclass\nclass Estimator:" in program and "@torch.compile" not in program
    # written out of its class as a function of its own, `self` its first parameter
    assert "\ndef targets(self, rewards):\n    out = rewards * self.gamma\n" in program
    assert "out = torch.compile(targets, backend='eager')(Estimator(gamma=0.9), rewards)" in program
    assert program.rstrip().endswith(
        "expected = targets(Estimator(gamma=0.9), rewards)\ntorch.testing.assert_close(out, expected)"
    )


def test_grad_mode_and_exact_values_as_recorded():
    spec = InputSpec("features", shape=(2,), recorded=(0.5, -1.0))
    program = lifted_program(SCRIPT, _call("pad", [Argument("tensor", spec=spec), Argument("literal", "3")], grad_enabled=False), check=False, exact=True)
    assert "torch.set_grad_enabled(False)" in program and "features = torch.tensor([0.5, -1.0], dtype=torch.float32)" in program


def test_what_cannot_be_written_is_not_lifted():
    assert lifted_program(SCRIPT, _call("pad", [Argument("unknown", "Tokenizer")]), check=False) is None
    assert lifted_program(SCRIPT, RecordedCall("pad", "helpers", (FEATURES,), (), CompileCall()), check=False) is None
    assert lifted_program(SCRIPT, _call("missing", [FEATURES]), check=False) is None


def test_arguments_are_recorded_as_they_can_be_written():
    assert argument(torch.ones(2, 3, requires_grad=True)).spec.shape == (2, 3)
    assert argument((1, 2.5, None)) == Argument("sequence", "tuple", items=(Argument("literal", "1"), Argument("literal", "2.5"), Argument("literal", "None")))
    assert argument(object()).kind == "unknown"


def test_the_lifted_check_stands_for_the_scripts_own_only_where_it_compares_the_compiled_call():
    original = Bug("AssertionError: assert not _ -- problems", exception="AssertionError", under_compile=ONLY)
    lifted = Bug("AssertionError: Booleans mismatch: True is not False", exception="AssertionError", under_compile=ONLY)
    assert lifted_bug("script", original, Verdict(True, bug=lifted)) == lifted
    assert lifted_bug("script", original, Verdict(True, bug=lifted.with_(under_compile=ALSO))) is None
    def compared(*origins: str) -> Bug:
        return Bug("AssertionError", exception="AssertionError", under_compile=ONLY, comparison=f"assert_close of {', '.join(origins)}",
                   comparison_kind="assert_close", comparison_origins=origins)
    assert lifted_bug("script", original, Verdict(True, bug=compared("input", "input"))) is None
    assert lifted_bug("script", original, Verdict(True, bug=compared("compiled", "input"))) == compared("compiled", "input")
    grad = Bug("requires-grad: eager=True compiled=False", eager_requires_grad=True)
    assert lifted_bug("requires-grad", grad, Verdict(True, bug=grad)) == grad
    assert lifted_bug("numerical", Bug("numerical: float32 value"), Verdict(True, "numerical: float32 nan")) is None
    assert lifted_bug("script", original, Verdict(False)) is None


FACTORY_SCRIPT = '''
import dataclasses

import torch


def skewing_backend(name, scale=1.5):
    def backend(gm, example_inputs):
        return lambda *args: [out * scale for out in gm(*args)] if name == "focal" else gm.forward
    return backend


def focal_loss(logits):
    return logits.sigmoid().mean()


compiled = {n: torch.compile(focal_loss, backend=skewing_backend(n)) for n in ("focal", "kl")}
'''


def test_a_backend_made_by_a_factory_of_the_script_is_lifted_as_the_factorys_call():
    logits = Argument("tensor", spec=InputSpec("logits", shape=(4, 8)))
    call = _call("focal_loss", [logits], backend="__main__:skewing_backend(name='focal')")
    program = lifted_program(FACTORY_SCRIPT, call, check=True)
    assert "def skewing_backend(name, scale=1.5):" in program and "compiled = {" not in program
    assert "out = torch.compile(focal_loss, backend=skewing_backend(name='focal'))(logits)" in program
    compile(program, "lifted", "exec")


def test_a_closure_backend_no_program_can_name_is_not_lifted():
    logits = Argument("tensor", spec=InputSpec("logits", shape=(4, 8)))
    call = _call("focal_loss", [logits], backend="__main__:skewing_backend.<locals>.backend")
    assert lifted_program(FACTORY_SCRIPT, call, check=True) is None


def test_a_call_that_returned_a_bool_is_asserted_to_give_the_other():
    # Where the compiled call returned True (a `requires_grad` read after `detach_()`), eager gives False.
    rewards = Argument("tensor", spec=InputSpec("rewards", shape=(5,), requires_grad=True))
    estimator = Argument("object", "Estimator", fields=(("gamma", Argument("literal", "0.9")),))
    call = dataclasses.replace(_call("Estimator.targets", [estimator, rewards], backend="eager"), returned="True")
    program = lifted_program(SCRIPT, call, check=True)
    assert program.rstrip().endswith("(Estimator(gamma=0.9), rewards)\nassert not out") and "expected" not in program


def test_a_call_is_recorded_before_it_runs_and_again_with_the_bool_it_returned():
    from minimizer.graph.call_record import recording_calls

    def attached(x):
        return x.requires_grad

    sunk = []
    recorded = recording_calls(attached, attached, CompileCall(), sunk.append, list)
    assert recorded(torch.ones(1, requires_grad=True)) is True
    assert [call.returned for call in sunk] == ["", "True"] and sunk[0].same_call(sunk[1])


def test_the_one_bool_inside_what_a_call_returned_is_recorded_where_it_sits():
    from minimizer.graph.call_record import recording_calls

    def target(x):
        y = x * 2
        return y, {"attached": y.requires_grad, "mean": y.mean()}

    sunk = []
    recording_calls(target, target, CompileCall(), sunk.append, list)(torch.ones(1, requires_grad=True))
    assert (sunk[1].returned, sunk[1].returned_at) == ("True", "[1]['attached']")
    twice = []
    recording_calls(lambda x: (True, False), lambda x: (True, False), CompileCall(), twice.append, list)(torch.ones(1))
    assert len(twice) == 1  # two bools: which one the check reads cannot be told
    call = dataclasses.replace(sunk[1], target="target", module="__main__")
    program = lifted_program("import torch\n\n\n" + "def target(x):\n    return x\n", call, check=True)
    assert program.rstrip().endswith("(x)[1]['attached']\nassert not out")


def test_a_module_of_the_scripts_own_class_is_recorded_as_the_script_built_it(monkeypatch):
    from minimizer.graph.call_record import record_module_construction

    monkeypatch.setattr(torch.nn.Module, "__init__", torch.nn.Module.__init__)  # restored after the test
    record_module_construction()

    class Critic(torch.nn.Module):
        __module__, __qualname__ = "__main__", "Critic"  # as the script's top-level class

        def __init__(self, obs_dim, hidden=32):
            super().__init__()
            self.net = torch.nn.Linear(obs_dim, hidden)

    class Loose(torch.nn.Module):
        __module__ = "__main__"

        def __init__(self, *layers):
            super().__init__()

    built = argument(Critic(6))
    assert built == Argument("object", "Critic", fields=(("obs_dim", Argument("literal", "6")), ("hidden", Argument("literal", "32"))))
    assert argument(Loose()).kind == "unknown" and argument(torch.nn.Linear(1, 1)).kind == "unknown"
    script = "import torch\n\n\nclass Critic(torch.nn.Module):\n    def targets(self, x):\n        return x\n"
    call = RecordedCall("Critic.targets", "__main__", (built, FEATURES), (), CompileCall(backend="aot_eager"))
    assert "out = torch.compile(targets, backend='aot_eager')(Critic(obs_dim=6, hidden=32), x)" in lifted_program(script, call, check=False)


def test_the_call_the_bug_showed_in_is_recorded_where_its_shapes_match_an_earlier_one():
    from minimizer.graph.call_record import recording_calls

    def wrap(values, periods):
        return torch.remainder(values, periods)

    for wanted, periods in ((None, [24.0]), (2, [24.0, float("inf")])):
        sunk = []
        recorded = recording_calls(wrap, wrap, CompileCall(), sunk.append, list, wanted_call=wanted)
        for period in (24.0, 7.0, float("inf")):  # the same shapes every call: only the first is told apart
            recorded(torch.arange(4.0), torch.full((4,), period))
        assert [call.args[1].spec.recorded[0] for call in sunk] == periods


def test_a_tensor_of_the_scripts_own_subclass_is_lifted_as_one_with_its_class():
    class StoreEmbedding(torch.Tensor):
        __module__, __qualname__ = "__main__", "StoreEmbedding"  # as the script's top-level class

    recorded = argument(torch.ones(2, 1).as_subclass(StoreEmbedding), "queries")
    assert recorded.kind == "tensor" and recorded.text == "StoreEmbedding" and argument(torch.ones(1)).text == ""
    script = (
        "import torch\n\n\nclass StoreEmbedding(torch.Tensor):\n    pass\n\n\nclass Unused:\n    pass\n\n\n"
        "def score(queries, keys):\n    return queries @ keys\n"
    )
    keys = Argument("tensor", spec=InputSpec("keys", shape=(1, 1)))
    program = lifted_program(script, _call("score", [recorded, keys], backend="eager"), check=False)
    assert "class StoreEmbedding(torch.Tensor):" in program and "class Unused" not in program
    assert "queries = torch.rand(2, 1).as_subclass(StoreEmbedding)" in program  # ones: positive draws
    compile(program, "lifted", "exec")
