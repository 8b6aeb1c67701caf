import libcst as cst

from minimizer.source.passes.items.appends import appended_lists_to_displays
from minimizer.source.passes.names.tuples import split_tuple_assignments
from minimizer.source.rendering import render


def _candidates(pass_, code):
    return [render(c) for c in pass_(cst.parse_module(code))]


def test_a_list_appended_once_becomes_a_display_at_the_append():
    code = "pairs = []\nx = f()\npairs.append((name, x))\nfor name, out in pairs:\n    check(out)\n"
    assert _candidates(appended_lists_to_displays, code) == [
        "x = f()\npairs = [(name, x)]\nfor name, out in pairs:\n    check(out)\n"
    ]


def test_a_list_read_before_its_append_or_appended_twice_stays():
    read_before = "pairs = []\nprint(len(pairs))\npairs.append(x)\n"
    twice = "pairs = []\npairs.append(x)\npairs.append(y)\n"
    extended = "pairs = []\npairs.append(x)\npairs.extend(ys)\n"
    for code in (read_before, twice, extended):
        assert _candidates(appended_lists_to_displays, code) == []


def test_inside_a_function_body_too():
    code = "def collect():\n    out = []\n    out.append(g())\n    return out\n"
    assert _candidates(appended_lists_to_displays, code) == ["def collect():\n    out = [g()]\n    return out\n"]


def test_one_item_unpacked_to_a_tuple_target_is_bound_whole():
    code = "(name, out, ref), = [(n, a, b)]\n"
    assert _candidates(split_tuple_assignments, code) == ["(name, out, ref) = (n, a, b)\n"]
