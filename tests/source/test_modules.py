import libcst as cst
from hypothesis import given, settings

from minimizer.source.passes.statements.dead_code import keep_effects_of_unused_assignments
from minimizer.source.passes.structure.modules import module_classes_to_functions
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, module_classes, runs_and_computes

FORWARD_ONLY = """import torch


class Classifier(torch.nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, signal):
        return torch.softmax(signal, dim=-1)


out = torch.compile(Classifier())(x)
"""


def candidates(fn, code: str) -> list[str]:
    return [candidate.code for candidate in fn(cst.parse_module(code))]


def test_a_forward_only_module_becomes_a_function():
    (converted,) = candidates(module_classes_to_functions, FORWARD_ONLY)
    assert "def classifier(signal):\n    return torch.softmax(signal, dim=-1)" in converted
    assert "out = torch.compile(classifier)(x)" in converted and "class " not in converted


def test_a_plain_class_with_only_call_becomes_a_function():
    code = "class PenaltyLoss:\n    def __call__(self, z, out):\n        return grad(out, z)\n\n\nPenaltyLoss()(z, out)\n"
    (converted,) = candidates(module_classes_to_functions, code)
    assert converted == "def penalty_loss(z, out):\n    return grad(out, z)\n\n\npenalty_loss(z, out)\n"


def test_modules_with_state_or_arguments_are_left_alone():
    with_state = FORWARD_ONLY.replace("super().__init__()", "super().__init__()\n        self.w = 1")
    assert candidates(module_classes_to_functions, with_state) == []
    reads_self = FORWARD_ONLY.replace("torch.softmax(signal", "self.act(signal")
    assert candidates(module_classes_to_functions, reads_self) == []
    constructed_with_args = FORWARD_ONLY.replace("Classifier()", "Classifier(3)")
    assert candidates(module_classes_to_functions, constructed_with_args) == []


def test_converted_module_computes_the_same():
    code = "class Double:\n    def forward(self, x):\n        return x * 2\nresult = Double()(21)\n"
    code = code.replace("Double()(21)", "Double().forward(21)")
    # `.forward` is an attribute use, not a call of the class: left alone.
    assert candidates(module_classes_to_functions, code) == []
    base = "class Base:\n    def __call__(self, *args):\n        return self.forward(*args)\n"
    plain = base + "class Double(Base):\n    def forward(self, x):\n        return x * 2\nf = Double()\nresult = f(21)\n"
    reduced = greedy_reduce(plain, module_classes_to_functions, runs_and_computes("result", 42))
    assert reduced == base + "def double(x):\n    return x * 2\nf = double\nresult = f(21)\n"


def test_unused_assignment_keeps_its_value_expression():
    code = "import torch\nout = torch.compile(f)(x)\ny = 1\nprint(y)\n"
    assert candidates(keep_effects_of_unused_assignments, code) == ["import torch\ntorch.compile(f)(x)\ny = 1\nprint(y)\n"]


def test_assignments_that_are_read_or_alias_a_name_are_left_alone():
    assert candidates(keep_effects_of_unused_assignments, "a = f()\nprint(a)\n") == []
    assert candidates(keep_effects_of_unused_assignments, "a = b\n") == []


@settings(max_examples=40, deadline=None)
@given(module_classes)
def test_candidates_are_valid_and_never_larger(code):
    check_candidates_are_valid_and_not_larger(code, module_classes_to_functions)
    check_candidates_are_valid_and_not_larger(code, keep_effects_of_unused_assignments)


def test_a_stateless_class_used_for_one_method_is_that_method():
    source = "import dataclasses\n\n\n@dataclasses.dataclass\nclass Evaluator:\n    def evaluate(self, x):\n        return x, ref\n\n\nname, out, ref = 'eval', *Evaluator().evaluate(a)\nEvaluator().evaluate(b)\n"
    (code,) = [c.code for c in module_classes_to_functions(cst.parse_module(source))]
    assert "class " not in code and "def evaluate(x):\n    return x, ref\n" in code
    assert code.endswith("name, out, ref = 'eval', *evaluate(a)\nevaluate(b)\n")
    for kept in [
        source.replace("return x, ref", "return self.scale * x"),  # reads its state
        source.replace("Evaluator().evaluate(b)", "e = Evaluator()"),  # used as an object
        source.replace("@dataclasses.dataclass\n", "@register\n"),  # a decorator that may do anything
        source + "evaluate = 1\n",  # the name is taken
    ]:
        assert [c.code for c in module_classes_to_functions(cst.parse_module(kept))] == [], kept
