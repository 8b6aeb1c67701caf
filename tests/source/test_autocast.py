import libcst as cst
import pytest

from minimizer.source.passes.devices.autocast import autocast_to_dtypes


def codes(source):
    return [candidate.code for candidate in autocast_to_dtypes(cst.parse_module(source))]


LIFTED = """import torch

torch.set_autocast_enabled('cpu', True)


def repro(w, x):
    return torch.nn.functional.silu(torch.nn.functional.conv1d(x, w))


arg0 = torch.ones(1, 1, 1)
arg1 = torch.randn(1, 1, dtype=torch.float32)
torch.testing.assert_close(torch.compile(repro)(arg0, arg1), repro(arg0, arg1))
"""


def test_autocast_enabled_goes_and_the_inputs_are_made_in_its_dtype():
    explicit, _ = codes(LIFTED)
    assert "set_autocast_enabled" not in explicit
    assert "arg0 = torch.ones(1, 1, 1, dtype=torch.bfloat16)\n" in explicit
    assert "arg1 = torch.randn(1, 1, dtype=torch.float32)\n" in explicit  # a dtype the script names stays
    # What the repro computes in is what autocast computed in.
    import torch

    w, x = torch.ones(1, 1, 1), torch.ones(1, 1)
    with torch.autocast("cpu"):
        autocast = torch.nn.functional.silu(torch.nn.functional.conv1d(x, w))
    typed = torch.nn.functional.silu(torch.nn.functional.conv1d(x.bfloat16(), w.bfloat16()))
    assert autocast.dtype == typed.dtype == torch.bfloat16 and torch.equal(autocast, typed)


def test_an_autocast_block_is_unwrapped_with_its_dtype():
    source = "import torch\nx = torch.ones(2)\nwith torch.autocast('cuda', dtype=torch.bfloat16):\n    y = f(x)\n"
    (explicit,) = codes(source)
    assert explicit == "import torch\nx = torch.ones(2, dtype=torch.bfloat16)\ny = f(x)\n"
    (default,) = codes(source.replace(", dtype=torch.bfloat16", ""))
    assert "torch.ones(2, dtype=torch.float16)" in default


@pytest.mark.parametrize("source", [
    "import torch\ntorch.set_autocast_enabled('cpu', False)\n",
    "import torch\ntorch.set_autocast_dtype('cpu', torch.float16)\ntorch.set_autocast_enabled('cpu', True)\n",
    "import torch\nwith torch.autocast(device):\n    y = f(x)\n",  # a device the source does not state
    "import torch\nwith torch.autocast('cpu', enabled=flag):\n    y = f(x)\n",
    "import torch\nwith torch.autocast('cpu'), torch.no_grad():\n    y = f(x)\n",
])
def test_autocast_it_cannot_read_stays(source):
    assert codes(source) == []


def test_the_operator_autocast_cast_for_goes_with_it():
    typed, bypassed = codes(LIFTED)
    assert "return torch.nn.functional.silu(x)\n" in bypassed and "arg0 = torch.ones(1, 1, 1, dtype=torch.bfloat16)" in bypassed
    assert "conv1d" in typed
