import libcst as cst

from minimizer.source.passes.values.factories import constant_tensors_to_factories


def rewrites(source: str) -> list[str]:
    return [candidate.code for candidate in constant_tensors_to_factories(cst.parse_module(source))]


def test_a_nested_list_of_one_float_becomes_its_factory():
    assert rewrites("x = torch.tensor([[1.0, 1.0], [1.0, 1.0]])\n") == ["x = torch.ones(2, 2)\n"]
    assert rewrites("x = torch.tensor([0.0, 0.0, 0.0], requires_grad=True)\n") == [
        "x = torch.zeros(3, requires_grad=True)\n"
    ]
    assert rewrites("x = torch.tensor([[-2.5, -2.5], [-2.5, -2.5]])\n") == ["x = torch.full((2, 2), -2.5)\n"]
    assert rewrites("x = torch.tensor([-2.5, -2.5])\n") == []  # the full() call would be longer


def test_full_of_one_or_zero_becomes_ones_or_zeros():
    assert rewrites("x = torch.full((2, 2), 1.0)\ny = torch.full([3], 0.0, dtype=torch.half)\n") == [
        "x = torch.ones(2, 2)\ny = torch.full([3], 0.0, dtype=torch.half)\n",
        "x = torch.full((2, 2), 1.0)\ny = torch.zeros(3, dtype=torch.half)\n",
    ]


def test_integers_mixed_values_and_ragged_lists_stay():
    # torch.tensor([1, 1]) is int64, torch.ones(2) float32: another program.
    assert rewrites("a = torch.tensor([1, 1])\nb = torch.tensor([1.0, 2.0])\nc = torch.tensor([[1.0], [1.0, 1.0]])\n") == []
    assert rewrites("d = torch.full((2,), 7.0)\ne = torch.full((2,), 1)\n") == []
