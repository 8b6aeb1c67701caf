"""The emitted script: readable spellings, a prelude taken from the original, and a faithful round trip."""

from __future__ import annotations

import torch

from minimizer.graph.emit import emit_script, public_name
from minimizer.graph.prelude import prelude_from_script
from tests.graph.conftest import Block, capture_case, real_inputs


def _module_part(text: str) -> str:
    return text.split("\nmodel = Repro()")[0]


def test_public_names():
    assert public_name(torch._C._nn.linear) == "torch.nn.functional.linear"
    assert public_name(torch.relu) == "torch.relu"
    assert public_name(torch.nn.functional.silu) == "torch.nn.functional.silu"
    assert public_name(torch.ops.aten.add.Tensor) == "torch.ops.aten.add.Tensor"


def test_emitted_module_computes_what_the_graph_computes(block_case):
    text = emit_script(block_case)
    assert "torch._C" not in text and "torch.ops" not in text
    assert "torch.nn.functional.linear(" in text and " + " in text and ".view(" in text
    namespace: dict = {}
    exec(compile(_module_part(text), "<repro>", "exec"), namespace)
    model = namespace["Repro"]()
    values = real_inputs(block_case, seed=1)
    members = iter(dict(model.named_parameters()) | dict(model.named_buffers()))
    arguments = []
    for spec, value in zip(block_case.inputs, values):
        if spec.kind in ("parameter", "buffer"):
            target = getattr(model, next(members))
            with torch.no_grad():
                target.copy_(value)
        else:
            arguments.append(value)
    expected = block_case.gm(*values)
    got = model(*arguments)
    assert len(expected) == 1  # one output is returned on its own, not as a 1-tuple
    torch.testing.assert_close(got, expected[0])


def test_emitted_script_runs_and_checks_on_its_own(block_case):
    text = emit_script(block_case)
    assert "compiled = torch.compile(model, backend='eager')" in text
    assert "torch.testing.assert_close(out, expected, rtol=1e-3, atol=1e-3, equal_nan=True)" in text
    exec(compile(text, "<repro>", "exec"), {"__name__": "__main__"})  # eager backend: the check passes


def test_exact_integer_values_are_written_out():
    case = capture_case(lambda x, index: x[index] * 2, torch.randn(5, 3), torch.tensor([4, 0, 2]))
    text = emit_script(case)
    assert "torch.tensor([4, 0, 2], dtype=torch.int64)" in text
    assert "x[index]" in text


def test_prelude_keeps_imports_and_compiler_configuration():
    source = '''
import torch
import torch.nn.functional as F
from _planted import plant_miscompile
from library_model import TinyTransformer

torch.manual_seed(0)
torch._inductor.config.fallback_random = True
torch._dynamo.config.suppress_errors = False
plant_miscompile()
model = TinyTransformer()
print("hello")
torch.compile(model)(torch.randn(3))
'''
    prelude = prelude_from_script(source)
    assert prelude.splitlines() == [
        "import torch",
        "import torch.nn.functional as F",
        "from _planted import plant_miscompile",
        "from library_model import TinyTransformer",
        "torch._inductor.config.fallback_random = True",
        "torch._dynamo.config.suppress_errors = False",
        "plant_miscompile()",
    ]


def test_emitted_script_carries_the_prelude_and_compile_arguments():
    case = capture_case(Block(), torch.randn(2, 3, 8), prelude="import torch\nimport math\nX = math.pi\n")
    text = emit_script(case)
    assert text.startswith("import torch\nimport math\n")
    assert text.count("import torch\n") == 1


def test_requires_grad_check():
    torch.manual_seed(0)  # the values drawn decide how the input is emitted (a small spread is scaled)
    case = capture_case(lambda x: x * 2, torch.randn(3, requires_grad=True), check="requires_grad")
    text = emit_script(case)
    assert "torch.randn(3, requires_grad=True)" in text
    assert "assert out.requires_grad == expected.requires_grad" in text


def test_inputs_recorded_above_zero_are_drawn_above_zero():
    # A batch norm's running variance drawn from randn makes the output NaN on both sides, hiding any bug.
    case = capture_case(lambda x, var: x / var.sqrt(), torch.randn(4), torch.rand(4) + 0.1)
    text = emit_script(case)
    assert "torch.rand(4)" in text and "torch.randn(4)" in text


def test_a_graph_compiled_under_no_grad_is_emitted_under_no_grad():
    import dataclasses

    case = capture_case(lambda x: torch.sin(x) * 2, torch.randn(3))
    assert "set_grad_enabled" not in emit_script(case)
    text = emit_script(dataclasses.replace(case, grad_enabled=False))
    assert "torch.set_grad_enabled(False)\n" in text
    with torch.enable_grad():  # the script turns grad mode off for good: not for the tests after this one
        exec(compile(text, "<repro>", "exec"), {"__name__": "__main__"})


def test_small_floating_inputs_keep_their_values_for_a_bug_that_needs_them():
    from minimizer.graph.case import with_recorded_values

    case = capture_case(lambda m: torch.linalg.matrix_norm(torch.arctan(m)), torch.ones(2, 2))
    assert case.inputs[0].recorded == (1.0, 1.0, 1.0, 1.0)
    assert "torch.tensor(" not in emit_script(case)  # random first
    recorded = with_recorded_values(case)
    assert "torch.tensor([[1.0, 1.0], [1.0, 1.0]], dtype=torch.float32)" in emit_script(recorded)
    assert with_recorded_values(capture_case(lambda m: m * 2, torch.ones(9, 9))) is None  # too many to write out


def test_a_callable_backend_is_named_as_the_script_imported_it(block_case):
    import dataclasses

    from minimizer.graph.case import CompileCall

    by_name = dataclasses.replace(block_case, compile=CompileCall(backend="serve_backend:serve"), prelude="from serve_backend import serve\n")
    text = emit_script(by_name)
    assert "compiled = torch.compile(model, backend=serve)" in text and "import serve_backend\n" not in text
    by_module = dataclasses.replace(by_name, prelude="import torch\n")
    text = emit_script(by_module)
    assert "import serve_backend\n" in text.split("class Repro")[0]
    assert "compiled = torch.compile(model, backend=serve_backend.serve)" in text


BACKEND_IN_THE_SCRIPT = '''
import torch

SWAPS = {torch.relu: torch.sigmoid}


def swapped(target):
    return SWAPS.get(target, target)


def planted_backend(gm, example_inputs):
    for node in gm.graph.nodes:
        node.target = swapped(node.target)
    gm.recompile()
    return gm.forward


class Unrelated:
    pass


model = Unrelated()
print(torch.compile(torch.relu, backend=planted_backend)(torch.ones(2)))
'''


def test_a_backend_the_script_defines_comes_with_what_it_reads_and_nothing_else():
    prelude = prelude_from_script(BACKEND_IN_THE_SCRIPT, ["planted_backend"])
    assert "SWAPS = {" in prelude and "def swapped(" in prelude and "def planted_backend(" in prelude
    assert "Unrelated" not in prelude and "print(" not in prelude
    assert prelude.index("SWAPS") < prelude.index("def swapped") < prelude.index("def planted_backend")
    assert "planted_backend" not in prelude_from_script(BACKEND_IN_THE_SCRIPT)


def test_a_backend_the_script_defines_is_compiled_by_its_name(block_case):
    import dataclasses

    from minimizer.graph.case import CompileCall

    prelude = prelude_from_script(BACKEND_IN_THE_SCRIPT, ["planted_backend"])
    case = dataclasses.replace(block_case, compile=CompileCall(backend="__main__:planted_backend"), prelude=prelude)
    text = emit_script(case)
    assert "compiled = torch.compile(model, backend=planted_backend)" in text and "import __main__" not in text


def test_inputs_recorded_with_a_small_spread_are_drawn_with_it():
    """Weights initialised at std 0.02 drawn at unit variance blow a deep graph's activations up."""

    weight = torch.randn(64, 64) * 0.02
    case = capture_case(lambda x, w: x @ w, torch.randn(64, 64), weight)
    text = emit_script(case)
    assert "inputs = [torch.randn(64, 64), torch.randn(64, 64) * 0.02]" in text
    leaf = torch.randn(64, 64, requires_grad=True)
    graded = emit_script(capture_case(lambda x, w: x @ w, leaf, (weight * 1).requires_grad_()))
    assert "(torch.randn(64, 64) * 0.02).requires_grad_()" in graded
    exec(compile(graded, "<repro>", "exec"), {"__name__": "__main__"})


def test_a_graph_compiled_under_autocast_is_emitted_under_it():
    # Generated seed 141: a model called under `torch.autocast("cpu")` compiles a bfloat16 graph; emitted without
    # the autocast, it ran in float32 and showed "a different failure".
    import dataclasses

    from minimizer.graph.capture import autocast_now

    seen = []

    def record(gm, example_inputs):
        seen.append(autocast_now())
        return gm.forward

    torch._dynamo.reset()
    with torch.autocast("cpu"):
        torch.compile(lambda x: x @ x, backend=record)(torch.randn(2, 2))
    assert seen == [["cpu:bfloat16"]]
    case = dataclasses.replace(capture_case(lambda x: x @ x, torch.randn(2, 2)), autocast=("cpu:bfloat16",))
    text = emit_script(case)
    assert "torch.set_autocast_enabled('cpu', True)\n" in text and "set_autocast_dtype" not in text
    namespace = {"__name__": "__main__"}
    try:
        exec(compile(text, "<repro>", "exec"), namespace)
    finally:
        torch.set_autocast_enabled("cpu", False)
    assert namespace["out"].dtype == torch.bfloat16


def test_the_prelude_carries_the_operators_the_script_registers_with_what_they_read():
    script = '''
import torch

lib = torch.library.Library("mylib", "DEF")
lib.define("scale(Tensor x) -> Tensor")
FACTOR = 3.0


def scale_impl(x):
    return x * FACTOR


lib.impl("scale", scale_impl, "CompositeExplicitAutograd")


@torch.library.custom_op("mylib::shift", mutates_args=())
def shift(x: torch.Tensor) -> torch.Tensor:
    return x + 1


def unrelated():
    return 0


def step(x):
    return torch.ops.mylib.scale(x)


print(torch.compile(step)(torch.ones(2)))
'''
    prelude = prelude_from_script(script, ["step"])
    for kept in ('lib = torch.library.Library("mylib", "DEF")', "lib.define(", "FACTOR = 3.0", "def scale_impl(x):",
                 'lib.impl("scale"', '@torch.library.custom_op("mylib::shift"', "def step(x):"):
        assert kept in prelude, kept
    assert "def unrelated" not in prelude and "print(" not in prelude
    assert prelude.index("def scale_impl") < prelude.index('lib.impl("scale"')
    compile(prelude, "prelude", "exec")


def test_recorded_infinities_and_nans_are_written_as_python_can_read_them():
    from minimizer.graph.case import InputSpec
    from minimizer.graph.spelling import tensor_expression

    spec = InputSpec("periods", shape=(2, 2), values=(float("inf"), -float("inf"), float("nan"), 24.0))
    written = eval(tensor_expression(spec), {"torch": torch})
    assert written[0].tolist() == [float("inf"), -float("inf")] and written[1, 0].isnan() and written[1, 1] == 24.0
