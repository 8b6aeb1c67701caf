import libcst as cst

from minimizer.source.passes.random_inputs import random_inputs_to_ones


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
