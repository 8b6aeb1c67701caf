import libcst as cst
import torch

from minimizer.source.passes.expressions.leaves import layers_to_leaves

AUTO_ENCODER = """import torch
from torch import nn


def auto_encoder(x):
    z = encoder(x)
    return decoder(z), z


encoder = nn.Conv2d(1, 1, 1)
decoder = nn.Conv2d(1, 1, 1)
reconstruction, latents = auto_encoder(torch.randn(1, 1, 1))
"""


def codes(source):
    return [candidate.code for candidate in layers_to_leaves(cst.parse_module(source))]


def test_a_bound_layer_becomes_a_differentiable_step_on_a_leaf_that_requires_grad():
    first, second = codes(AUTO_ENCODER)
    assert "    z = x * 2\n" in first and "encoder =" not in first and "decoder = nn.Conv2d(1, 1, 1)" in first
    assert "auto_encoder(torch.randn(1, 1, 1, requires_grad=True))" in first
    assert "    return z * 2, z\n" in second and "decoder =" not in second
    # What the bypass of the same call loses, the candidate keeps: the outputs are on autograd's tape.
    for code in (AUTO_ENCODER, first, second):
        scope: dict = {}
        exec(code, scope)
        assert scope["latents"].requires_grad and scope["reconstruction"].grad_fn is not None


def test_a_layer_built_where_it_is_called_on_a_factory_becomes_the_factory_requiring_grad():
    source = "import torch\nfrom torch import nn\nq = f(nn.Linear(1, 1)(torch.randn(1)))\n"
    assert codes(source) == ["import torch\nfrom torch import nn\nq = f(torch.randn(1, requires_grad=True))\n"]
    assert torch.randn(1, requires_grad=True).requires_grad  # the replacement is a leaf autograd tracks


def test_layers_used_other_than_by_a_call_on_one_input_stay():
    for source in [
        "import torch\nfrom torch import nn\nlin = nn.Linear(1, 1)\ny = lin(x)\nw = lin.weight\n",
        "import torch\nfrom torch import nn\nattn = nn.MultiheadAttention(4, 1)\ny = attn(q, k, v)\n",
        "import torch\nfrom torch import nn\nlin = nn.Linear(1, 1)\nlin = nn.Linear(2, 2)\ny = lin(x)\n",
        "import torch\nq = f(nn.Linear(1, 1)(torch.randn(1, requires_grad=True)))\n",
    ]:
        assert codes(source) == [], source


def test_factories_inside_functions_are_left_as_they_are():
    source = "import torch\nfrom torch import nn\nlin = nn.Linear(1, 1)\n\n\ndef f():\n    return lin(torch.ones(1))\n"
    (code,) = codes(source)
    assert "return torch.ones(1) * 2" in code and "requires_grad" not in code


def test_with_several_factories_each_is_also_marked_alone():
    source = (
        "import torch\nfrom torch import nn\n\n\ndef router(tokens):\n    counters[0].add_(1)\n    return gate(tokens)\n\n\n"
        "gate = nn.Linear(1, 1)\ncounters = torch.zeros(2)\nout = router(torch.randn(1))\n"
    )
    every, first, second = codes(source)
    assert "torch.zeros(2, requires_grad=True)" in every and "torch.randn(1, requires_grad=True)" in every
    assert "torch.zeros(2, requires_grad=True)" in first and "torch.randn(1))" in first
    assert "torch.zeros(2)\n" in second and "torch.randn(1, requires_grad=True)" in second
    # Only the last keeps the script running: a buffer updated in place must not require grad.
    scope: dict = {}
    exec(second, scope)
    assert scope["out"].requires_grad and scope["counters"].tolist() == [1.0, 0.0]


# The critic's lifted method: `self` is the script's module, written back as a layer it calls once.
CRITIC = """import torch
import torch.nn as nn


def targets(self, next_obs):
    target = self(next_obs)
    target.detach_()
    return not target.requires_grad


out = torch.compile(targets, backend='aot_eager')(nn.Linear(1, 1), torch.ones(1, 1))
assert out
"""


def test_a_layer_every_call_gives_a_parameter_goes_with_the_parameter():
    (candidate,) = codes(CRITIC)
    assert "def targets(next_obs):\n    target = next_obs * 2\n" in candidate
    assert "torch.compile(targets, backend='aot_eager')(torch.ones(1, 1, requires_grad=True))" in candidate
    eager = candidate.replace("torch.compile(targets, backend='aot_eager')", "targets").replace("assert out", "")
    scope: dict = {}
    exec(eager, scope)
    assert scope["out"] is True  # eager: the detached target no longer requires grad
    # Read otherwise than called on one input (`self.weight`), the layer stays.
    assert codes(CRITIC.replace("target = self(next_obs)", "target = self(next_obs) * self.weight")) == []
