"""Capture in a child process: one run of a tiny script with a graph break, backend="eager"."""

from __future__ import annotations

import json
import os
import textwrap

import torch

from minimizer.graph.capture import capture_graphs, case_from_capture
from minimizer.graph.emit import emit_script
from minimizer.runner.process import RunSettings

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


def test_a_capture_run_answers_the_cpu_probe_from_the_hosts_record(tmp_path, monkeypatch):
    """A capture run is a fresh interpreter: where the parent says the script leaves Inductor's CPU probe alone,
    it answers from this host's record (a recorded no stays a no) instead of probing; otherwise it probes."""

    from torch._inductor import cpu_vec_isa

    from minimizer.graph import capture_child
    from minimizer.runner import vec_isa
    from minimizer.runner.prelude import SETTLE_VEC_ISA_VARIABLE, SETTLE_ON_ANY_HOST

    monkeypatch.setattr(vec_isa, "VEC_ISA_PROBE_CACHE", tmp_path)
    probed = []
    monkeypatch.setattr(cpu_vec_isa.VecISA, "check_build", lambda isa, code: probed.append(code) or True)
    isa = cpu_vec_isa.VecAVX2()
    vec_isa._record().write_text(json.dumps({vec_isa._answer_key(isa, "probe code"): False}))
    capture_child._replay_the_cpu_probe()  # not asked for: the probe is the script's own
    assert cpu_vec_isa.VecISA.check_build(isa, "probe code") is True and probed == ["probe code"]
    monkeypatch.setenv(SETTLE_VEC_ISA_VARIABLE, SETTLE_ON_ANY_HOST)
    capture_child._replay_the_cpu_probe()
    assert cpu_vec_isa.VecISA.check_build(isa, "probe code") is False and probed == ["probe code"]
    assert SETTLE_VEC_ISA_VARIABLE not in os.environ  # the script does not see it
