import libcst as cst

from minimizer.source.passes.structure.partials import partial_calls_to_calls
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and_computes


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in partial_calls_to_calls(cst.parse_module(code))]


def test_a_partial_called_on_the_spot_is_its_functions_call():
    assert candidates("out = functools.partial(scaled_call, model, 0.5)(x)\n") == ["out = scaled_call(model, 0.5, x)\n"]
    assert candidates("y = partial(f, scale=2)(x, bias=1)\n") == ["y = f(x, scale=2, bias=1)\n"]


def test_partials_not_called_at_once_or_overridden_by_name_are_left():
    assert candidates("run = functools.partial(f, 1)\ny = run(2)\n") == []
    assert candidates("y = functools.partial(f, scale=2)(x, scale=3)\n") == []
    assert candidates("y = functools.partial(*fs)(x)\n") == []


def test_the_call_computes_the_same():
    code = "import functools\ndef f(a, b, c=0, d=0):\n    return a * 100 + b * 10 + c + d\nresult = functools.partial(f, 1, d=4)(2, c=3)\n"
    reduced = greedy_reduce(code, partial_calls_to_calls, runs_and_computes("result", 127))
    assert reduced.endswith("result = f(1, 2, d=4, c=3)\n")
    check_candidates_are_valid_and_not_larger(code, partial_calls_to_calls)
