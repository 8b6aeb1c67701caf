import libcst as cst

from minimizer.source.passes.names.aliases import remove_name_aliases


def codes(source):
    return [candidate.code for candidate in remove_name_aliases(cst.parse_module(source))]


def test_an_alias_read_several_times_reads_the_original():
    source = "def f(x):\n    return x\n\n\nmodel = f\ny = torch.compile(model)(1), model(1)\n"
    (code,) = codes(source)
    assert "model" not in code and code.endswith("y = torch.compile(f)(1), f(1)\n")  # blank lines: the layout's


def test_aliases_of_rebound_or_shadowed_names_stay():
    for source in [
        "a = 1\nb = a\na = 2\nprint(b)\n",  # the original is rebound: b keeps the old value
        "a = 1\nb = a\nb = 3\nprint(b)\n",  # the alias is rebound
        "a = 1\nb = a\n\n\ndef g(a):\n    return b\n",  # read where `a` is a parameter
    ]:
        assert codes(source) == [], source


def test_an_alias_of_a_module_level_name_in_a_function_reads_the_original():
    source = "def f(x):\n    return x\n\n\ndef outputs():\n    model = f\n    return model(1), model(2)\n"
    assert codes(source) == ["def f(x):\n    return x\n\n\ndef outputs():\n    return f(1), f(2)\n"]
    assert codes("f = 1\ndef g(f):\n    m = f\n    return m + m\n") == []  # the function binds the original
    assert codes("f = 1\ndef g():\n    m = f\n    m = 2\n    return m + m\n") == []  # the alias is rebound
