import libcst as cst

from minimizer.source.passes.values.random_inputs import random_inputs_to_ones


def codes(source):
    return [candidate.code for candidate in random_inputs_to_ones(cst.parse_module(source))]


def test_random_factories_become_ones_together_then_one_at_a_time():
    source = "import torch\nx = torch.randn(2, 3)\ny = torch.rand_like(x)\nz = torch.randint(0, 3, (2,))\n"
    both, first, second = codes(source)
    assert "x = torch.ones(2, 3)\ny = torch.ones_like(x)\n" in both
    assert "x = torch.ones(2, 3)\ny = torch.rand_like(x)\n" in first
    assert "x = torch.randn(2, 3)\ny = torch.ones_like(x)\n" in second
    assert all("torch.randint(0, 3, (2,))" in code for code in (both, first, second))


def test_a_call_given_a_generator_stays():
    assert codes("import torch\nx = torch.randn(2, generator=g)\n") == []


def test_a_one_dimensional_draw_also_counts_after_the_ones():
    import torch

    source = "import torch\nx = torch.randn(4, requires_grad=True)\ny = torch.rand(2, 3)\nz = torch.randn(n)\n"
    *ones, counted = codes(source)
    assert all("arange" not in code for code in ones)
    assert "x = torch.arange(4.0, requires_grad=True)\ny = torch.rand(2, 3)\nz = torch.randn(n)\n" in counted
    # A count of the draw's length, dtype and flags: what the draw would have been, with every element distinct.
    x = torch.arange(4.0, requires_grad=True)
    assert (x.shape, x.dtype, x.requires_grad, len(set(x.tolist()))) == ((4,), torch.randn(4).dtype, True, 4)
