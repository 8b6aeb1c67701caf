import libcst as cst

from minimizer.source.passes.unpacked import drop_unread_loop_items
from tests.source.helpers import check_candidates_are_valid_and_not_larger


def codes(source):
    return [candidate.code for candidate in drop_unread_loop_items(cst.parse_module(source))]


def test_a_label_the_loop_never_reads_goes_from_the_loop_and_every_row():
    # Generated seed 387: a case table's label, computed for a message that is gone.
    source = (
        "pairs = [('a', f(x), ref)]\nfor rows in [1]:\n    pairs.append((Case(rows).name, f(y), ref))\n"
        "for name, out, ref in pairs:\n    check(out, ref)\n"
    )
    (dropped,) = codes(source)
    assert dropped == (
        "pairs = [(f(x), ref)]\nfor rows in [1]:\n    pairs.append((f(y), ref))\nfor out, ref in pairs:\n    check(out, ref)\n"
    )
    two = "for name, out in [('a', f(x)), ('b', f(y))]:\n    check(out)\n"
    assert codes(two) == ["for out in [f(x), f(y)]:\n    check(out)\n"]
    made = "for name, out in [(f'b{i}', o) for i, o in enumerate(outs)]:\n    check(out)\n"
    assert codes(made) == ["for out in [o for i, o in enumerate(outs)]:\n    check(out)\n"]


def test_rows_the_pass_cannot_see_whole_stay():
    assert codes("for name, out in make_pairs():\n    check(out)\n") == []  # rows from a call
    assert codes("pairs = [('a', 1)]\nprint(pairs)\nfor name, out in pairs:\n    check(out)\n") == []  # read elsewhere
    assert codes("for name, out in [('a', 1), row]:\n    check(out)\n") == []  # a row that is no tuple display
    assert codes("for name, out in [('a', 1)]:\n    check(name, out)\n") == []  # both read


def test_candidates_are_valid_and_not_larger():
    check_candidates_are_valid_and_not_larger(
        "pairs = []\npairs.append(('a', 1, 2))\nfor n, a, b in pairs:\n    print(a + b)\n", drop_unread_loop_items
    )
