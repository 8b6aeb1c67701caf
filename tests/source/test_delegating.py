import libcst as cst

from minimizer.source.passes.structure.delegating import collapse_delegating_modules
from tests.source.helpers import greedy_reduce

CHAIN = '''import torch.nn as nn


class SqueezeExcite(nn.Module):
    def __init__(self, channels, ratio):
        super().__init__()
        self.fc = nn.Linear(channels, channels // ratio)

    def forward(self, x):
        return self.fc(x)


class Block(nn.Module):
    def __init__(self, channels, ratio=4):
        super().__init__()
        self.excite = SqueezeExcite(channels, ratio)

    def forward(self, x):
        return self.excite(x)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.block = Block(8)

    def forward(self, x):
        return self.block(x)


net = Net()
'''


def candidates(code):
    return [c.code for c in collapse_delegating_modules(cst.parse_module(code))]


def test_each_level_of_a_chain_collapses_into_what_it_built():
    found = candidates(CHAIN)
    # SqueezeExcite's forward reads `self.fc` too, but it is a leaf: its parameters are used twice by its
    # expression (channels), which is fine since the arguments are names.
    assert any("self.excite" not in c and "self.block = SqueezeExcite(8, 4)" in c for c in found)
    assert any("class Net" not in c and "net = Block(8)" in c for c in found)


def test_greedy_collapse_leaves_the_leaf():
    reduced = greedy_reduce(CHAIN, collapse_delegating_modules, lambda code: compile(code, "s", "exec") is not None)
    assert "class Block" not in reduced and "class Net" not in reduced
    assert "net = nn.Linear(8, 8 // 4)" in reduced


def test_classes_with_state_or_other_uses_stay():
    with_state = CHAIN.replace("        self.excite = SqueezeExcite(channels, ratio)\n",
                               "        self.excite = SqueezeExcite(channels, ratio)\n        self.scale = 2\n")
    assert not any("class Block" not in c for c in candidates(with_state))
    subclassed = CHAIN + "\n\nclass Deeper(Block):\n    pass\n"
    assert not any("class Block" not in c for c in candidates(subclassed))
    keyword = CHAIN.replace("self.block = Block(8)", "self.block = Block(channels=8)")
    assert not any("class Block" not in c for c in candidates(keyword))


def test_an_argument_with_effects_is_not_repeated():
    code = '''class Twice(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.inner = nn.Linear(n, n)

    def forward(self, x):
        return self.inner(x)


m = Twice(next_size())
'''
    assert candidates(code) == []
    assert [c.strip() for c in candidates(code.replace("next_size()", "size"))] == ["m = nn.Linear(size, size)"]
