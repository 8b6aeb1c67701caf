import libcst as cst

from minimizer.source.passes.names.known_shapes import fold_known_shapes


def codes(source):
    return [candidate.code for candidate in fold_known_shapes(cst.parse_module(source))]


def test_sizes_read_from_a_factory_with_literal_shape_become_literals():
    source = (
        "import torch\nx = torch.randn(2, 3, requires_grad=True)\nrows, cols = x.shape\nn = x.size(0)\n"
        "k = x.shape[1]\nkernel[rows,](x, cols, n, k)\n"
    )
    unpacked, sized, indexed = codes(source)
    assert "rows, cols" not in unpacked and "kernel[2,](x, 3, n, k)" in unpacked
    assert "n = " not in sized and "kernel[rows,](x, cols, 2, k)" in sized
    assert "k = " not in indexed and "kernel[rows,](x, cols, n, 3)" in indexed
    # What the fold reads is what running it gives.
    import torch

    x = torch.randn(2, 3, requires_grad=True)
    assert (x.shape[0], x.shape[1], x.size(0)) == (2, 3, 2)


def test_shapes_not_stated_as_literals_or_names_bound_twice_stay():
    for source in [
        "import torch\nx = torch.randn(n, 3)\nrows, cols = x.shape\n",
        "import torch\nx = load()\nrows, cols = x.shape\n",
        "import torch\nx = torch.randn(2, 3)\nx = x.t()\nrows, cols = x.shape\n",
        "import torch\nx = torch.randn(2, 3)\nrows, cols = x.shape\nrows = 4\n",
        "import torch\nx = torch.randn(2, 3)\nrows, cols, depth = x.shape\n",
        "def f(x):\n    b, d = x.shape\n    return b\n",
    ]:
        assert codes(source) == [], source


def test_sizes_and_strides_read_in_expressions_fold_to_what_torch_says():
    import torch

    source = (
        "x = torch.ones(3, 2, 4)\nw = torch.zeros(3, 1)\nwt = w.T\n"
        "k[x.size(0),](x, x.stride(0), x.stride(2), x.shape[1], wt.stride(0), wt.t().stride(0), wt.size(1))\n"
    )
    candidates = [c.code for c in fold_known_shapes(cst.parse_module(source))]
    assert candidates[-1].splitlines()[-1] == "k[3,](x, 8, 1, 2, 1, wt.t().stride(0), 3)"
    x, wt = torch.ones(3, 2, 4), torch.zeros(3, 1).T
    assert (x.size(0), x.stride(0), x.stride(2), x.shape[1], wt.stride(0), wt.size(1)) == (3, 8, 1, 2, 1, 3)


def test_element_counts_and_sizes_counted_from_the_end_fold_to_what_torch_says():
    import torch

    source = (
        "x = torch.ones(2, 3)\nn = x.numel()\nlast = x.size(-1)\nb, d = x.size()\n"
        "k[n,](x, n, x.shape[-1], x.shape[-2], len(x), x.numel(), x.size(), last, b, d)\n"
    )
    *statements, inline = codes(source)
    assert [c.splitlines()[-1] for c in statements] == [
        "k[6,](x, 6, x.shape[-1], x.shape[-2], len(x), x.numel(), x.size(), last, b, d)",
        "k[n,](x, n, x.shape[-1], x.shape[-2], len(x), x.numel(), x.size(), 3, b, d)",
        "k[n,](x, n, x.shape[-1], x.shape[-2], len(x), x.numel(), x.size(), last, 2, 3)",
    ]
    # `x.size()` is the whole shape, never one size: it stays.
    assert inline.splitlines()[-1] == "k[n,](x, n, 3, 2, 2, 6, x.size(), last, b, d)"
    x = torch.ones(2, 3)
    assert (x.numel(), x.size(-1), x.shape[-1], x.shape[-2], len(x), tuple(x.size())) == (6, 3, 3, 2, 2, (2, 3))


def test_an_index_past_the_shape_is_not_folded():
    assert codes("import torch\nx = torch.ones(2)\nk(x.shape[-2], x.size(1))\n") == []
