import libcst as cst

from minimizer.source.passes.structure.asserts import asserts_to_their_calls, drop_assert_messages


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


def test_an_asserts_computed_message_goes_one_assert_at_a_time_and_a_literal_one_stays():
    source = 'assert ok(out), f"{name}: outputs differ"\nassert x == 1\nassert y, "y" + str(k)\nassert z, "literal " "words"\n'
    found = [candidate.code for candidate in drop_assert_messages(cst.parse_module(source))]
    assert found == [
        source.replace(', f"{name}: outputs differ"', ""),
        source.replace(', "y" + str(k)', ""),
    ]
