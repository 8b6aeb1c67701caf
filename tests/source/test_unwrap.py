import libcst as cst
from hypothesis import given, settings
from hypothesis import strategies as st

from minimizer.source.passes.statements.unwrap import unwrap_compound_statements
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, module_classes, runs_and_computes, snippets


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in unwrap_compound_statements(cst.parse_module(code))]


def test_if_becomes_its_body_then_its_else():
    code = "if a:\n    x = 1\nelif b:\n    x = 2\nelse:\n    x = 3\n"
    assert candidates(code) == ["x = 1\n", "if b:\n    x = 2\nelse:\n    x = 3\n"]
    assert candidates("if a:\n    x = 1\nelse:\n    x = 2\n") == ["x = 1\n", "x = 2\n"]


def test_outer_statements_come_first():
    code = "with torch.no_grad():\n    if c: f(); g()\n"
    assert candidates(code) == ["if c: f(); g()\n", "with torch.no_grad():\n    f(); g()\n"]


def test_try_becomes_its_body_and_while_stays():
    code = "try:\n    a()\nexcept E:\n    b()\nfinally:\n    c()\nwhile x:\n    h()\n"
    assert candidates(code) == ["a()\nwhile x:\n    h()\n"]


def test_loops_and_withs_whose_names_are_read_stay():
    # A loop that reads its variable becomes its first iteration (a training loop of one step: the step).
    assert candidates("for i in range(1):\n    f(i)\n") == ["i = 0\nf(i)\n"]  # its one item
    assert candidates("for i in data:\n    f(i)\n") == ["i, = data\nf(i)\n"]  # turned down where it holds more
    # A table of cases down to one row: the row, bound to the loop's names.
    loop = "for rows, scale in itertools.product([2], [1.0]):\n    f(rows, scale)\n"
    assert candidates(loop) == ["rows, scale = (2, 1.0)\nf(rows, scale)\n"]
    # An unread enumerate index goes first (unpacking a pair would not be smaller than the loop).
    assert candidates("for step, x in enumerate(data):\n    f(x)\n") == ["for x in data:\n    f(x)\n"]
    assert candidates("for _ in range(3):\n    f()\n") == ["f()\n"]
    assert candidates("with open(p) as fh:\n    fh.read()\n") == []


def test_main_function_is_inlined_where_it_is_called():
    code = "import torch\ndef main():\n    x = 1\n    print(x)\n\nif __name__ == '__main__':\n    main()\n"
    assert candidates(code)[0] == "import torch\n\nif __name__ == '__main__':\n    x = 1\n    print(x)\n"
    assert candidates(code)[1] == "import torch\ndef main():\n    x = 1\n    print(x)\n\nmain()\n"


def test_functions_called_several_times_or_by_keyword_are_not_inlined():
    assert candidates("def main(a):\n    x = a\nmain(a=1)\n") == []
    assert candidates("def main():\n    x = 1\nmain()\nmain()\n") == []


@settings(max_examples=25, deadline=None)
@given(st.one_of(snippets, module_classes))
def test_candidates_compile_and_never_grow(code):
    check_candidates_are_valid_and_not_larger(code, unwrap_compound_statements)


def test_greedy_loop_unwraps_what_the_result_does_not_need():
    code = """\
mode = "run"
def main():
    global result
    total = 0
    for _ in range(1):
        try:
            if total == 0:
                total += 5
            else:
                total = -1
        except ValueError:
            total = 0
    result = total
if mode == "run":
    main()
"""
    reduced = greedy_reduce(code, unwrap_compound_statements, runs_and_computes("result", 5))
    assert reduced == 'mode = "run"\nglobal result\ntotal = 0\ntotal += 5\nresult = total\n'


def test_a_helper_called_once_with_arguments_is_inlined_with_its_parameters_bound():
    code = "def outcome(fn, x, scale=2):\n    fn(x * scale)\n\n\noutcome(model, data)\n"
    assert [c.strip() for c in candidates(code)] == ["fn, x, scale = model, data, 2\nfn(x * scale)"]
    # A helper whose value is used, or that returns, stays.
    assert not any("def outcome" not in c for c in candidates(code.replace("    fn(x * scale)", "    return fn(x)")))


def test_a_loop_over_a_display_of_one_item_binds_the_item_to_its_target():
    import libcst as cst

    from minimizer.source.passes.statements.unwrap import unwrap_compound_statements

    code = 'for name, out, ref in [(f"step{s}", f(x), g(x))]:\n    check(out, ref)\n'
    got = [c.code for c in unwrap_compound_statements(cst.parse_module(code))]
    assert got == ['name, out, ref = (f"step{s}", f(x), g(x))\ncheck(out, ref)\n']
