import libcst as cst

from minimizer.source.passes.configs import inline_config_defaults

SCRIPT = '''from dataclasses import dataclass


@dataclass
class TrainConfig:
    width: int = 64
    layers: int = 2
    name: str = "run"


class Net:
    def __init__(self, config: TrainConfig):
        self.w = config.width * config.layers


config = TrainConfig()
net = Net(config)
print(config.name, config.width)
'''


def candidates(code):
    return [c.code for c in inline_config_defaults(cst.parse_module(code))]


def test_every_field_read_becomes_its_default_then_one_field_at_a_time():
    found = candidates(SCRIPT)
    assert "self.w = 64 * 2" in found[0] and 'print("run", 64)' in found[0]
    assert "self.w = 64 * config.layers" in found[1] and 'print(config.name, 64)' in found[1]
    assert len(found) == 4


def test_a_config_built_with_other_values_or_assigned_stays():
    assert candidates(SCRIPT.replace("config = TrainConfig()", "config = TrainConfig(width=8)")) == []
    assigned = candidates(SCRIPT + "config.width = 3\n")
    assert all("config.width" in c for c in assigned)
    assert candidates(SCRIPT.replace("    name: str = \"run\"\n", "    name: str = make_name()\n")) == []
