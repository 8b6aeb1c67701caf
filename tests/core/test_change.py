"""A cut's key: the same cut proposed on a later base is recognised, so its earlier answer can steer speculation."""

from minimizer.reduce.change import change_key

BASE = "import torch\nx = torch.ones(3)\ny = x.relu()\nz = y * 2\nprint(z)\n"


def test_the_same_cut_on_a_later_base_has_the_same_key():
    cut_y = change_key(BASE, BASE.replace("y = x.relu()\n", ""))
    later = BASE.replace("print(z)\n", "")  # another step taken elsewhere
    assert change_key(later, later.replace("y = x.relu()\n", "")) == cut_y
    assert change_key(BASE, BASE.replace("z = y * 2\n", "")) != cut_y


def test_a_rewrite_inside_a_line_is_told_by_what_it_wrote():
    relu_gone = change_key(BASE, BASE.replace("x.relu()", "x"))
    assert relu_gone == change_key(BASE.replace("* 2", "* 3"), BASE.replace("* 2", "* 3").replace("x.relu()", "x"))
    assert relu_gone != change_key(BASE, BASE.replace("x.relu()", "x.tanh()"))


def test_indentation_alone_is_no_change():
    indented = BASE.replace("\n", "\n    ").rstrip() + "\n"
    assert change_key(BASE, indented) is None
