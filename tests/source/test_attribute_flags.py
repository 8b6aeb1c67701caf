import libcst as cst

from minimizer.source.passes.structure.attribute_flags import attribute_flags_to_parameters
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and_computes

SCRIPT = '''class Block:
    def __init__(self):
        self.scale = 2
        self.fused = True

    def __call__(self, x):
        if self.fused:
            return x * self.scale + 1
        return x * self.scale


blocks = Block()
fused = blocks(3)
blocks.fused = False
result = (fused, blocks(3))
'''


def candidates(code: str) -> list[str]:
    return [c.code for c in attribute_flags_to_parameters(cst.parse_module(code))]


def test_a_flag_switched_between_calls_is_passed_to_each_call():
    (converted,) = candidates(SCRIPT)
    assert "    def __call__(self, x, fused=True):\n        if fused:\n" in converted
    assert "self.fused" not in converted and "blocks.fused" not in converted
    assert converted.endswith("fused = blocks(3)\nresult = (fused, blocks(3, False))\n")


def test_the_calls_compute_what_they_did():
    reduced = greedy_reduce(SCRIPT, attribute_flags_to_parameters, runs_and_computes("result", (7, 6)))
    assert "blocks(3, False)" in reduced


def test_a_flag_whose_order_of_calls_does_not_tell_it_stays():
    in_a_loop = SCRIPT.replace("result = (fused, blocks(3))\n", "for _ in range(2):\n    result = blocks(3)\n")
    in_a_function = SCRIPT + "def again():\n    return blocks(4)\n"
    set_inside = SCRIPT.replace("        return x * self.scale\n", "        self.fused = True\n        return x * self.scale\n")
    passed_on = SCRIPT + "models = [blocks]\n"
    assert [candidates(code) for code in (in_a_loop, in_a_function, set_inside, passed_on)] == [[], [], [], []]


def test_candidates_are_valid_and_not_larger():
    check_candidates_are_valid_and_not_larger(SCRIPT, attribute_flags_to_parameters)
