import libcst as cst

from minimizer.source.passes.values.factories import constant_tensors_to_factories, literal_tensors_to_draws


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


def test_infinities_and_nans_count_as_one_value():
    assert rewrites('p = torch.tensor([float("inf"), float("inf"), float("inf"), float("inf")])\n') == [
        'p = torch.full((4,), float("inf"))\n'
    ]
    assert rewrites('p = torch.tensor([math.nan, math.nan, math.nan, math.nan])\n') == ["p = torch.full((4,), math.nan)\n"]


def test_a_list_counting_up_by_one_becomes_arange():
    assert rewrites("s = torch.tensor([0.0, 1.0, 2.0, 3.0], dtype=torch.bfloat16)\n") == [
        "s = torch.arange(4.0, dtype=torch.bfloat16)\n"
    ]
    assert rewrites("s = torch.tensor([3, 4, 5])\n") == ["s = torch.arange(3, 6)\n"]
    assert rewrites("s = torch.tensor([0, 2, 4])\nt = torch.tensor([[0, 1, 2]])\n") == []


def draws(source: str) -> list[str]:
    return [candidate.code for candidate in literal_tensors_to_draws(cst.parse_module(source))]


def test_values_of_no_pattern_become_a_draw_of_their_shape_and_sign():
    assert draws("x = torch.tensor([[3.03, 1.1], [0.5, 2.25]])\n") == ["x = torch.rand(2, 2)\n"]
    assert draws("v = torch.tensor([0.4, -1.2, 0.3, 2.0], dtype=torch.float64, requires_grad=True)\n") == [
        "v = torch.randn(4, dtype=torch.float64, requires_grad=True)\n"
    ]
    assert draws("i = torch.tensor([[5, -3], [7, 1]], dtype=torch.int8)\n") == [
        "i = torch.randint(-3, 8, (2, 2), dtype=torch.int8)\n"
    ]
    assert draws("f = torch.tensor([5, 3, 7, 1], dtype=torch.float32)\n") == ["f = torch.rand(4, dtype=torch.float32)\n"]


def test_draws_leave_patterns_specials_and_short_lists_to_others():
    assert draws("a = torch.tensor([1.5, -2.0, 3.0])\n") == []  # too few values to be anything but the bug's own
    assert draws('b = torch.tensor([1.0, float("inf"), 2.0, 0.5])\n') == []  # a draw never holds an infinity
    assert draws("c = torch.tensor([0.0, 1.0, 2.0, 3.0])\nd = torch.tensor([2.0, 2.0, 2.0, 2.0])\n") == []
