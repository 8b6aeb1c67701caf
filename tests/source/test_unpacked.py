import libcst as cst

from minimizer.source.passes.items.unpacked import drop_unread_loop_items
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


def assigned(source):
    from minimizer.source.passes.items.unpacked import drop_unread_assigned_items

    return [candidate.code for candidate in drop_unread_assigned_items(cst.parse_module(source))]


def test_a_label_an_assignment_unpacks_for_nothing_goes_from_both_sides():
    # Never-seen seed 439: the label of a helper's two results, unpacked with them.
    source = 'name, out, ref = "eval", *evaluate(x)\ncheck(out, ref)\n'
    assert assigned(source) == ["out, ref = evaluate(x)\ncheck(out, ref)\n"]
    assert assigned("a, b, c = 1, *f(x)\ncheck(b, c)\n") == ["b, c = f(x)\ncheck(b, c)\n"]


def test_items_an_assignment_cannot_pair_stay():
    assert assigned("a, b = f(x)\ncheck(b)\n") == []  # no display to take the item from
    assert assigned("a, b = 1, *rest\ncheck(b)\n") == []  # one name would take what the starred item unpacks
    assert assigned("a, b, c = 1, 2, 3\ncheck(b, c)\n") == []  # no starred item: split_tuple_assignments' case
    assert assigned("a, b, c = *rest, 1\ncheck(b, c)\n") == []  # a starred item first: nothing is aligned
    assert assigned("a, b = 1, 2\ncheck(a, b)\n") == []  # every name read
