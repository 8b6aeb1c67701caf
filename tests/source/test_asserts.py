import libcst as cst

from minimizer.source.passes.asserts import asserts_to_their_calls


def candidates(source: str) -> list[str]:
    return [candidate.code for candidate in asserts_to_their_calls(cst.parse_module(source))]


def test_an_assert_becomes_each_outermost_call_of_its_test():
    source = 'assert model == outcome(opt(x), y), "msg"\nassert check(z)\n'
    assert candidates(source) == [
        "outcome(opt(x), y)\nassert check(z)\n",
        'assert model == outcome(opt(x), y), "msg"\ncheck(z)\n',
    ]


def test_an_assert_without_a_call_stays():
    assert candidates("assert x == 1\nassert all(v for v in [f(1)])\n") == [
        "assert x == 1\nall(v for v in [f(1)])\n"
    ]
