"""Capture in a child process: one run of a tiny script with a graph break, backend="eager"."""

from __future__ import annotations

import json
import textwrap

import torch

from minimizer.graph.capture import capture_graphs, case_from_capture
from minimizer.graph.emit import emit_script
from minimizer.runner.run_types import RunSettings

SCRIPT = textwrap.dedent(
    '''
    import torch

    torch._dynamo.config.cache_size_limit = 8


    class Net(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x):
            y = torch.relu(self.linear(x))
            torch._dynamo.graph_break()
            return torch.sin(y) * 2


    out = torch.compile(Net(), backend="eager", dynamic=False)(torch.randn(2, 4))
    assert False, "the script fails after compiling"
    '''
)


def test_capture_records_every_graph_its_inputs_and_the_compile_call(tmp_path):
    settings = RunSettings(filename="tiny.py", origin_dir=str(tmp_path), oracles=())
    graphs = capture_graphs(SCRIPT, settings, timeout=120)
    assert len(graphs) == 2
    first, second = graphs
    assert first.compile.backend == "eager" and first.compile.dynamic is False and not first.compile.fullgraph
    kinds = {spec.name: spec.kind for spec in first.inputs}
    assert sorted(kinds.values()) == ["input", "parameter", "parameter"]
    x = next(spec for spec in first.inputs if spec.kind == "input")
    assert x.shape == (2, 4) and x.dtype == torch.float32 and x.stride == (4, 1)

    case = case_from_capture(second, prelude="import torch\n")
    assert case is not None
    text = emit_script(case)
    assert "torch.sin(" in text and "backend='eager'" in text and "dynamic=False" in text
    exec(compile(text, "<repro>", "exec"), {"__name__": "__main__"})


def test_a_graph_that_cannot_be_captured_still_compiles_as_the_script_asked(capsys):
    from minimizer.graph.capture import _CapturingBackend
    from minimizer.graph.case import CompileCall

    def broken_sink(captured):
        raise RuntimeError("disk full")

    compiled = []
    backend = _CapturingBackend(lambda gm, inputs: compiled.append(gm) or gm.forward, CompileCall(), broken_sink, [0])
    gm = torch.fx.symbolic_trace(torch.nn.ReLU())
    assert backend(gm, [torch.ones(2)]) == gm.forward
    assert compiled == [gm]
    assert "could not capture graph 0: disk full" in capsys.readouterr().err


def test_a_capture_run_answers_the_cpu_probe_through_the_hosts_record(tmp_path, monkeypatch):
    """A capture run is a fresh interpreter: for a script that leaves Inductor's CPU probe alone, its probe goes
    through this host's record (answers recorded there, replayed next time), as a warm candidate's does; a
    script that sets the probe's config itself probes on its own, and nothing is recorded."""

    monkeypatch.setenv("HOME", str(tmp_path))
    records = tmp_path / ".cache" / "minimizer" / "vec-isa-probe"
    origin = tmp_path / "origin"
    origin.mkdir()
    compiles_for_the_cpu = "import torch\ntorch.compile(torch.sin)(torch.ones(3))\n"
    settings = RunSettings("s.py", str(origin), ("crash",))
    capture_graphs("# leaves vec_isa_ok alone\n" + compiles_for_the_cpu, settings)  # says vec_isa: left to itself
    assert not list(records.glob("answers-*.json"))
    capture_graphs(compiles_for_the_cpu, settings)
    (record,) = records.glob("answers-*.json")
    assert json.loads(record.read_text())


def test_a_graph_that_assigns_by_index_loads_in_the_parent():
    """FX writes operator.setitem as `y[0] = v`, which a plain load cannot re-trace (transformers' MoE routing)."""

    import io

    import pytest

    from minimizer.graph.capture import _loaded_graph

    graphs = []

    def record(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    def fill(x):
        y = x.clone()
        y[0] = 1.0
        return y * 2

    torch._dynamo.reset()
    torch.compile(fill, backend=record)(torch.zeros(3))
    buffer = io.BytesIO()
    torch.save(graphs[0], buffer)
    with pytest.raises(TypeError):
        torch.load(io.BytesIO(buffer.getvalue()), weights_only=False)
    loaded = _loaded_graph(buffer.getvalue(), prelude="")
    assert loaded is not None
    torch.testing.assert_close(loaded(torch.zeros(3))[0], torch.tensor([2.0, 0.0, 0.0]))


def test_the_capture_run_records_the_compiled_functions_first_distinct_calls(tmp_path):
    from minimizer.graph.capture import capture_recording

    script = textwrap.dedent(
        '''
        import torch


        def pad(x, width):
            return torch.nn.functional.pad(x, (0, width - x.shape[-1]))


        def train():
            global pad
            pad = torch.compile(pad, backend="eager")
            for n in (3, 3, 5):
                pad(torch.ones(2, n, requires_grad=True), width=8)


        train()
        '''
    )
    settings = RunSettings(filename="calls.py", origin_dir=str(tmp_path), oracles=())
    calls = capture_recording(script, settings, timeout=120).calls
    assert [c.target for c in calls] == ["pad", "pad"]  # the second call of shape (2, 3) told nothing new
    assert [c.args[0].spec.shape for c in calls] == [(2, 3), (2, 5)] and calls[0].args[0].spec.requires_grad
    assert calls[0].kwargs == (("width", calls[0].kwargs[0][1]),) and calls[0].kwargs[0][1].text == "8"
    assert calls[0].compile.backend == "eager" and calls[0].module == "__main__"


def test_a_graph_compiled_at_an_earlier_call_records_the_wanted_calls_inputs(tmp_path):
    from minimizer.graph.capture import capture_recording

    # One graph for all three calls (same shapes), compiled at the first, whose period is finite; the bug's call
    # is the third, whose period is infinite: the graph's inputs are that call's, not the first's.
    script = textwrap.dedent(
        '''
        import torch


        def wrap(x, period):
            return torch.remainder(x, period)


        step = torch.compile(wrap)
        for period in (4.0, 5.0, float("inf")):
            step(torch.ones(3), torch.full((3,), period))
        '''
    )
    settings = RunSettings(filename="wrap.py", origin_dir=str(tmp_path), oracles=())
    recording = capture_recording(script, settings, timeout=300, wanted_call=2)
    assert len(recording.graphs) == 1
    periods = [spec for spec in recording.graphs[0].inputs if spec.shape == (3,)][-1]
    assert periods.recorded == (float("inf"),) * 3
    first = capture_recording(script, settings, timeout=300).graphs[0]
    assert [spec for spec in first.inputs if spec.shape == (3,)][-1].recorded == (4.0,) * 3


def _factory(name, scale=1.5):
    def backend(gm, example_inputs):
        return gm.forward if name != "focal" else (lambda *args: [o * scale for o in gm(*args)])
    return backend


def _computing_factory(scale):
    doubled = scale * 2

    def backend(gm, example_inputs):
        return lambda *args: [o * doubled for o in gm(*args)]
    return backend


def test_a_closure_backend_is_recorded_as_its_factorys_call_where_that_remakes_it():
    from minimizer.graph.capture import compile_call_of

    made = compile_call_of({"backend": _factory("focal")}).backend
    assert made == f"{__name__}:_factory(name='focal', scale=1.5)"  # its cells are the factory's parameters, as literals
    computed = compile_call_of({"backend": _computing_factory(1.5)}).backend
    assert computed.endswith("_computing_factory.<locals>.backend")  # `doubled` is no parameter: not remade
