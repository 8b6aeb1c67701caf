import libcst as cst

from minimizer.source.passes.devices.moves import moves_to_default_device
from minimizer.source.passes.structure.instances import single_instances_to_functions
from tests.source.helpers import check_candidates_are_valid_and_not_larger, greedy_reduce, runs_and

ON_THE_GPU = '''import torch
import torch.nn as nn

DEVICE = "cuda" if torch.cuda.is_available() else "cpu"


class Scale(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(2))

    def forward(self, x):
        return x * self.weight


model = Scale().to(DEVICE)
x = torch.randn(2, device=DEVICE).to(DEVICE)
result = model(x)
'''


def candidates(code: str) -> list[str]:
    return [c.code for c in moves_to_default_device(cst.parse_module(code))]


def test_the_moves_to_a_named_device_go_and_it_becomes_the_default_after_its_binding():
    (defaulted,) = candidates(ON_THE_GPU)
    assert 'DEVICE = "cuda" if torch.cuda.is_available() else "cpu"\ntorch.set_default_device(DEVICE)\n' in defaulted
    assert defaulted.endswith("model = Scale()\nx = torch.randn(2)\nresult = model(x)\n")


def test_device_strings_and_cuda_calls_are_one_device_set_after_the_imports():
    code = 'import torch\nimport math\n\nw = torch.ones(2).cuda()\nx = torch.ones(2, device="cuda").to(torch.device("cuda"))\n'
    assert candidates(code) == ['import torch\nimport math\ntorch.set_default_device("cuda")\n\nw = torch.ones(2)\nx = torch.ones(2)\n']


def test_a_device_object_chosen_at_run_time_is_a_device():
    code = ON_THE_GPU.replace('DEVICE = "cuda" if', 'DEVICE = torch.device("cuda" if').replace('else "cpu"', 'else "cpu")')
    (defaulted,) = candidates(code)
    assert "torch.set_default_device(DEVICE)\n" in defaulted and ".to(" not in defaulted


def test_moves_to_the_cpu_go_without_a_default():
    code = 'import torch\n\nDEVICE = "cpu"\nw = torch.ones(2).to(DEVICE)\nx = torch.ones(2).to("cpu")\n'
    assert sorted(candidates(code)) == [
        'import torch\n\nDEVICE = "cpu"\nw = torch.ones(2)\nx = torch.ones(2).to("cpu")\n',
        'import torch\n\nDEVICE = "cpu"\nw = torch.ones(2).to(DEVICE)\nx = torch.ones(2)\n',
    ]


def test_what_is_not_a_move_to_a_known_device_stays():
    casts = "import torch\n\nx = torch.ones(2).to(torch.half)\ny = x.to('cuda', non_blocking=True)\n"
    rebound = 'import torch\n\nDEVICE = "cuda"\nDEVICE = "cpu"\nx = torch.ones(2).to(DEVICE)\n'
    parameter = "import torch\n\n\ndef f(x, device):\n    return x.to(device)\n"
    no_torch_import = 'from torch import ones\n\nx = ones(2).cuda()\n'
    assert [candidates(code) for code in (casts, rebound, parameter, no_torch_import)] == [[], [], [], []]


def test_the_default_is_set_before_the_first_line_that_moves():
    code = 'import torch\n\nx = torch.ones(2).cuda()\nimport math\ny = x.cuda() + math.pi\n'
    (defaulted,) = candidates(code)
    assert defaulted == 'import torch\ntorch.set_default_device("cuda")\n\nx = torch.ones(2)\nimport math\ny = x + math.pi\n'


def test_the_defaulted_script_computes_what_it_did():
    on_the_cpu = ON_THE_GPU.replace('"cuda" if torch.cuda.is_available() else "cpu"', '"cpu"')
    reduced = greedy_reduce(on_the_cpu, moves_to_default_device, runs_and(lambda scope: scope["result"].shape == (2,)))
    assert ".to(" not in reduced and "device=" not in reduced and "set_default_device" not in reduced


def test_without_the_moves_the_instance_becomes_functions():
    assert not list(single_instances_to_functions(cst.parse_module(ON_THE_GPU)))
    (defaulted,) = candidates(ON_THE_GPU)
    assert list(single_instances_to_functions(cst.parse_module(defaulted)))


def test_candidates_are_valid_and_not_larger():
    check_candidates_are_valid_and_not_larger(ON_THE_GPU, moves_to_default_device)
