import libcst as cst
from hypothesis import given, settings

from minimizer.source.passes.structure.instances import single_instances_to_functions
from tests.source.helpers import check_candidates_are_valid_and_not_larger, module_classes, runs_and_computes

AUTOENCODER = """import torch
from torch import nn


class AutoEncoder(nn.Module):
    def __init__(self, channels=1):
        super().__init__()
        self.encoder = nn.Conv2d(channels, 1, 1)
        self.decoder = nn.Conv2d(1, channels, 1)

    def forward(self, x):
        z = self.encoder(x)
        return self.decoder(z), z


out, z = torch.compile(AutoEncoder())(torch.randn(1, 1, 1))
"""

MONITOR = """import torch


def probe(w):
    return torch.linalg.cond(w)


class Monitor:
    def __init__(self):
        self.probe = probe
        self.compiled = torch.compile(probe)

    def observe(self, weight):
        return self.probe(weight), self.compiled(weight)


pair = Monitor().observe(torch.ones(2, 2))
"""


def candidates(code: str) -> list[str]:
    return [candidate.code for candidate in single_instances_to_functions(cst.parse_module(code))]


def test_a_module_built_once_becomes_its_layers_and_a_function():
    (converted,) = candidates(AUTOENCODER)
    assert "class " not in converted
    assert "encoder = nn.Conv2d(1, 1, 1)\ndecoder = nn.Conv2d(1, 1, 1)\nout, z = torch.compile(auto_encoder)(" in converted
    assert "def auto_encoder(x):\n    z = encoder(x)\n    return decoder(z), z" in converted


def test_a_named_method_becomes_a_function_of_that_name():
    code = MONITOR.replace("        self.probe = probe\n", "").replace("self.probe(weight)", "probe(weight)")
    (converted,) = candidates(code)
    assert "def observe(weight):\n    return probe(weight), compiled(weight)" in converted


def test_an_attribute_that_aliases_a_name_reads_the_name_and_a_taken_name_gets_the_class_in_front():
    (converted,) = candidates(MONITOR)
    assert "def observe(weight):\n    return probe(weight), compiled(weight)" in converted
    assert "compiled = torch.compile(probe)\npair = observe(" in converted
    # `compiled` is taken at module level: the attribute's variable is named after the class.
    taken = MONITOR.replace("self.compiled = torch.compile(probe)", "self.compiled = torch.compile(self.probe)")
    (converted,) = candidates(taken.replace("pair =", "compiled = 1\npair ="))
    assert "monitor_compiled = torch.compile(probe)" in converted
    assert "return probe(weight), monitor_compiled(weight)" in converted


def test_instances_with_state_and_other_uses_are_left_alone():
    stateful = AUTOENCODER.replace("z = self.encoder(x)", "self.last = x\n        z = self.encoder(x)")
    assert candidates(stateful) == []
    twice = AUTOENCODER + "again = AutoEncoder()\n"
    assert candidates(twice) == []
    used_as_object = AUTOENCODER.replace("torch.compile(AutoEncoder())", "torch.compile(AutoEncoder().eval())")
    assert candidates(used_as_object) == []
    argument = AUTOENCODER.replace("AutoEncoder())", "AutoEncoder(1))")
    assert candidates(argument) == []


def test_the_function_computes_what_the_method_did():
    code = (
        "class Scale:\n    def __init__(self, factor=3):\n        self.factor = factor * 2\n"
        "    def __call__(self, x):\n        return x * self.factor\n"
        "result = Scale()(7)\n"
    )
    (converted,) = candidates(code)
    assert runs_and_computes("result", 42)(converted)
    assert "factor = 3 * 2\nresult = scale(7)" in converted


@settings(max_examples=40, deadline=None)
@given(module_classes)
def test_candidates_are_valid_and_never_larger(code):
    check_candidates_are_valid_and_not_larger(code, single_instances_to_functions)


BANK = """import torch


class FeatureBank(torch.nn.Module):
    def __init__(self, rows, scale=2):
        super().__init__()
        self.features = torch.ones(rows) * scale
        self.model = torch.nn.Linear(rows, rows)

    def snapshot(self):
        return self.features.clone()

    def forward(self, x):
        return self.model(x) + self.snapshot()


bank = FeatureBank(3)
before = bank.snapshot()
out = torch.compile(bank.model)(bank.features)
y = bank(before)
"""


def test_an_instance_bound_to_a_name_becomes_variables_and_functions():
    (converted,) = candidates(BANK)
    assert "class " not in converted and "bank." not in converted and "bank =" not in converted
    assert "features = torch.ones(3) * 2\nmodel = torch.nn.Linear(3, 3)\nbefore = snapshot()" in converted
    assert "def feature_bank(x):\n    return model(x) + snapshot()" in converted
    assert "out = torch.compile(model)(features)\ny = feature_bank(before)" in converted


def test_a_bound_instance_is_left_alone_when_used_as_an_object_or_rebound():
    assert candidates(BANK + "bank.features = None\n") == []
    assert candidates(BANK + "print(bank.training)\n") == []
    assert candidates(BANK.replace("FeatureBank(3)", "FeatureBank(other=3)")) == []


def test_a_keyword_argument_binds_as_a_positional_one():
    assert candidates(BANK.replace("FeatureBank(3)", "FeatureBank(rows=3)")) == candidates(BANK)


def test_the_flattened_instance_computes_the_same():
    code = BANK.replace("import torch", "import torch\ntorch.manual_seed(0)")
    (converted,) = candidates(code)
    namespace_a, namespace_b = {}, {}
    exec(compile(code, "a", "exec"), namespace_a)
    exec(compile(converted, "b", "exec"), namespace_b)
    assert namespace_a["y"].tolist() == namespace_b["y"].tolist()


def test_a_registered_buffer_is_an_attribute():
    code = (
        "import torch\n\n\nclass Offset(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        '        self.register_buffer("shift", torch.ones(1), persistent=False)\n\n'
        "    def forward(self, x):\n        return x + self.shift\n\n\n"
        "offset = Offset()\nresult = offset(torch.zeros(1))\n"
    )
    converted = candidates(code)
    assert any("shift = torch.ones(1)\nresult = offset(torch.zeros(1))" in c and "return x + shift" in c for c in converted)


SERVICE = """import torch


class Service:
    def __init__(self, config):
        self.config = config
        self.model = torch.nn.Linear(config.features, 1)
        self.compiled = torch.compile(self.model)

    def request(self, batch):
        return torch.randn(batch, self.config.features)


config = Config()
compiled = None
service = Service(config)
out = service.compiled(service.request(2))
"""


def test_a_bound_instance_reads_an_earlier_attribute_and_its_taken_names_get_the_instance_in_front():
    (converted,) = candidates(SERVICE)
    assert "def request(batch):\n    return torch.randn(batch, config.features)" in converted
    assert "model = torch.nn.Linear(config.features, 1)\nservice_compiled = torch.compile(model)\n" in converted
    assert converted.endswith("out = service_compiled(request(2))\n")


def test_an_instance_built_to_read_one_attribute_becomes_that_attribute_value():
    code = (
        "import torch\n\n\nclass Batch:\n    def __init__(self, n):\n        self.n = n\n"
        "        self.inputs = torch.randn(self.n) + 1\n\n\ny = Batch(3).inputs * 2\n"
    )
    converted = candidates(code)
    assert any("class" not in c and c.endswith("y = (torch.randn(3) + 1) * 2\n") for c in converted), converted


def test_an_aliased_attribute_stays_when_the_method_binds_that_name_itself():
    code = (
        "import torch\n\n\ndef probe(w):\n    return w * 2\n\n\nclass Monitor:\n    def __init__(self):\n"
        "        self.probe = probe\n\n    def observe(self, w):\n        probe = torch.sin\n"
        "        return probe(w) + self.probe(w)\n\n\ny = Monitor().observe(torch.ones(1))\n"
    )
    assert all("probe(w) + probe(w)" not in c for c in candidates(code))


HOLDER = """import torch


class Block(torch.nn.Module):
    def __init__(self, config):
        super().__init__()
        self.norm = torch.nn.LayerNorm(config.dim)


block = Block(Config())
y = block.norm(torch.ones(2, 4))
"""


def test_a_holder_of_layers_bound_to_a_name_becomes_its_layers_and_a_built_argument_read_once_goes_in():
    (converted,) = candidates(HOLDER)
    assert "class" not in converted and "block" not in converted
    assert "norm = torch.nn.LayerNorm(Config().dim)\ny = norm(torch.ones(2, 4))" in converted


def test_a_built_argument_read_twice_is_not_built_twice():
    read_twice = HOLDER.replace("LayerNorm(config.dim)", "LayerNorm(config.dim, config.eps)")
    assert candidates(read_twice) == []
    assert candidates(read_twice.replace("Block(Config())", "Block(config)")) != []


def test_an_argument_that_is_an_expression_keeps_its_grouping_where_it_goes_in():
    code = HOLDER.replace("LayerNorm(config.dim)", "LayerNorm(config * 2)").replace("Block(Config())", "Block(k + 1)")
    (converted,) = candidates(code)
    assert "norm = torch.nn.LayerNorm((k + 1) * 2)" in converted
