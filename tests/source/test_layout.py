from minimizer.source.layout import format_source


def test_redundant_parentheses_go_and_definitions_get_pep8_spacing():
    text = "import torch\ndef f(x):\n    return (x + 1)\ny = (f(torch.ones(1)))\n"
    assert format_source(text) == "import torch\n\n\ndef f(x):\n    return x + 1\n\n\ny = f(torch.ones(1))\n"


def test_an_empty_tuple_keeps_its_parentheses():
    # libcst refuses an empty tuple without them; the layout step must skip it, not fail the run.
    text = "def f(x):\n    return x.new_empty(())\nshape = ()\n"
    assert "new_empty(())" in format_source(text)
    assert "shape = ()" in format_source(text)


def test_parentheses_go_in_headers_and_nested_blocks_but_stay_where_they_bind():
    text = (
        "def f(x=(1), *, y=(2)):\n"
        "    for i in (range(3)):\n"
        "        if (x > i):\n"
        "            x = (x + 1) * 2  # kept comment\n"
        "    return (x, y)\n"
    )
    assert format_source(text) == (
        "def f(x=1, *, y=2):\n"
        "    for i in range(3):\n"
        "        if x > i:\n"
        "            x = (x + 1) * 2  # kept comment\n"
        "    return x, y\n"
    )


def test_one_blank_line_after_the_imports():
    text = "import torch\nimport deploy_backend\ntorch.manual_seed(0)\nx = torch.ones(1)\n"
    assert format_source(text) == "import torch\nimport deploy_backend\n\ntorch.manual_seed(0)\nx = torch.ones(1)\n"
    kept = "import torch\n\n\nx = torch.ones(1)\n"
    assert format_source(kept) == kept
