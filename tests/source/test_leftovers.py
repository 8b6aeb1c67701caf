import libcst as cst

from minimizer.source.passes.statements.leftovers import remove_what_the_step_left


def test_a_step_that_leaves_a_bare_name_and_an_unread_definition_has_both_removed_next():
    before = cst.parse_module("import torch\nrouter = torch.nn.Linear(1, 1)\nrouter.eval()\nx = 1\nprint(x)\n")
    after = cst.parse_module("import torch\nrouter = torch.nn.Linear(1, 1)\nrouter\nx = 1\nprint(x)\n")
    cleaned = remove_what_the_step_left(before, after)
    assert cleaned is not None and cleaned.code == "x = 1\nprint(x)\n"  # torch was read only by router


def test_what_was_already_idle_before_the_step_is_left_alone():
    before = cst.parse_module('"""doc"""\nx = 1\ny = 2\nprint(x, y)\n')
    after = cst.parse_module('"""doc"""\nx = 1\ny = 2\nprint(x, 2)\n')
    cleaned = remove_what_the_step_left(before, after)
    assert cleaned is not None and cleaned.code == '"""doc"""\nx = 1\nprint(x, 2)\n'
    assert remove_what_the_step_left(after, after) is None
