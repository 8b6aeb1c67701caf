import libcst as cst

from minimizer.source.passes.configs.defaults import inline_config_defaults

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
    built_twice = SCRIPT.replace("config = TrainConfig()", "config = TrainConfig(width=8)\nother = TrainConfig(width=9)")
    assert candidates(built_twice) == []
    assigned = candidates(SCRIPT + "config.width = 3\n")
    assert all("config.width" in c for c in assigned)
    computed_name = candidates(SCRIPT.replace("    name: str = \"run\"\n", "    name: str = make_name()\n"))
    assert computed_name and all("print(config.name" in c for c in computed_name)  # read as it is; the rest inline


ARGPARSE = '''import argparse

import torch

parser = argparse.ArgumentParser()
parser.add_argument("--batch-size", type=int, default=4)
parser.add_argument("--fp16", action="store_true")
parser.add_argument("--name", type=str, default="8")
args = parser.parse_args()
x = torch.randn(args.batch_size, 2)
if args.fp16:
    x = x.half()
print(parser.parse_args().batch_size, args.name)
'''


def test_command_line_options_become_their_defaults():
    from minimizer.source.passes.configs.defaults import inline_argument_defaults

    found = [c.code for c in inline_argument_defaults(cst.parse_module(ARGPARSE))]
    assert "x = torch.randn(4, 2)\nif False:\n" in found[0] and "print(4, args.name)" in found[0]
    assert len(found) == 3  # all at once, then each of the two options
    # the string default with a type= is argparse's to convert: left alone; an assigned option too
    assigned = ARGPARSE + "args.fp16 = True\n"
    found = [c.code for c in inline_argument_defaults(cst.parse_module(assigned))]
    assert all("if args.fp16" in code for code in found)


def test_argument_defaults_compute_what_argparse_gives(tmp_path):
    import subprocess
    import sys

    script = "import argparse\np = argparse.ArgumentParser()\np.add_argument('--k', default=3)\np.add_argument('-v', '--verbose', action='store_false')\na = p.parse_args()\nprint(a.k, a.verbose)\n"
    from minimizer.source.passes.configs.defaults import inline_argument_defaults

    (inlined, *_) = [c.code for c in inline_argument_defaults(cst.parse_module(script))]
    outputs = []
    for code in (script, inlined):
        (tmp_path / "s.py").write_text(code)
        outputs.append(subprocess.run([sys.executable, str(tmp_path / "s.py")], capture_output=True, text=True).stdout)
    assert outputs[0] == outputs[1] == "3 True\n"


def test_a_config_built_once_with_literal_keywords_reads_as_built():
    code = SCRIPT.replace("config = TrainConfig()", "config = TrainConfig(width=8)")
    (everything, *_) = candidates(code)
    assert "self.w = 8 * 2" in everything and 'print("run", 8)' in everything
    twice = code + "other = TrainConfig()\n"
    assert candidates(twice) == []
    computed = SCRIPT.replace("config = TrainConfig()", "config = TrainConfig(width=n)")
    assert candidates(computed) == []


def test_a_config_built_to_read_one_field_reads_its_default():
    import libcst as cst

    from minimizer.source.passes.configs.defaults import inline_config_defaults

    source = "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    eps: float = 1e-6\n\n\nnorm = RMSNorm(Config().eps)\n"
    (first, *_) = [c.code for c in inline_config_defaults(cst.parse_module(source))]
    assert first.endswith("norm = RMSNorm(1e-6)\n")


def test_fields_with_a_default_factory_of_constants_or_none_we_can_write_do_not_stop_the_others():
    import libcst as cst

    from minimizer.source.passes.configs.defaults import inline_config_defaults

    source = (
        "from dataclasses import dataclass, field\n\n\n@dataclass\nclass Config:\n    width: int = 4\n"
        "    sizes: list = field(default_factory=lambda: [1, 2])\n    names: list = field(default_factory=lambda: [make()])\n\n\n"
        "config = Config()\nbatch = config.sizes\nx = zeros(config.width)\ny = config.names\n"
    )
    first = [c.code for c in inline_config_defaults(cst.parse_module(source))][0]
    assert first.endswith("batch = [1, 2]\nx = zeros(4)\ny = config.names\n")


def test_another_class_storing_a_same_named_attribute_does_not_stop_the_config():
    handed_down = SCRIPT.replace("        self.w = config.width * config.layers", "        self.width = config.width")
    assert any("self.width = 64" in c for c in candidates(handed_down))
    post_init = SCRIPT.replace('    name: str = "run"\n', '    name: str = "run"\n\n    def __post_init__(self):\n        self.width = 8\n')
    assert all("self.w = 64" not in c for c in candidates(post_init))


LIFTED_METHOD = '''from dataclasses import dataclass
import torch


@dataclass
class ReturnEstimator:
    gamma: float = 0.0


def targets(self, next_value):
    returns = self.gamma * next_value
    return returns.requires_grad


next_value = torch.ones(1, requires_grad=True)
torch.testing.assert_close(torch.compile(targets)(ReturnEstimator(), next_value), targets(ReturnEstimator(), next_value))
'''


def test_a_parameter_every_call_gives_a_config_reads_its_defaults():
    # dyn_detach_dataclass_method: a method lifted out of its dataclass keeps `self`, given a fresh instance by the
    # compiled call and the eager one alike.
    found = candidates(LIFTED_METHOD)
    assert found and "returns = 0.0 * next_value" in found[0]
    # A function also called with something else, or named where it is not called, keeps its reads.
    assert candidates(LIFTED_METHOD + "targets(object(), next_value)\n") == []
    assert candidates(LIFTED_METHOD + "handlers = [targets]\n") == []


def test_a_tuple_of_constants_is_a_default_as_a_literal_is():
    source = (
        "from dataclasses import dataclass\n\n\n@dataclass\nclass Config:\n    sizes: tuple = 8, -16\n"
        "\n\nconfig = Config()\nfor n in config.sizes:\n    f(n)\n"
    )
    # longer than the read, the default is smaller with the config and its class gone
    assert candidates(source) == ["for n in (8, -16):\n    f(n)\n"]


def test_a_dataclass_built_once_with_positional_literals_reads_as_built():
    source = (
        "from dataclasses import dataclass\n\n\n@dataclass()\nclass Voice:\n    name: str\n    steps: int\n"
        "    gain: float = 1.0\n\n\nvoice = Voice('drone', 32)\nx = f(voice.steps, voice.gain)\nprint(voice.name)\n"
    )
    assert candidates(source)[0].endswith("x = f(32, 1.0)\nprint('drone')\n")
    assert candidates(source.replace("Voice('drone', 32)", "Voice(*args)")) == []
