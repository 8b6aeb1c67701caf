"""A failing job's graphs from its TORCH_TRACE folder (``minimizer.trace_programs``)."""

from __future__ import annotations

from pathlib import Path

from minimizer.trace_programs import traced_graphs

LOGGED = """import os
os.environ['TORCH_TRACE'] = '/job/trace'
os.environ['TORCHINDUCTOR_CACHE_DIR'] = '/job/cache'
import torch

class Repro(torch.nn.Module):
    def forward(self, arg0_1):
        return (torch.ops.aten.{op}.default(arg0_1),)

def load_args(reader):
{load_args}load_args._version = 0
mod = Repro()
if __name__ == '__main__':
    from torch._dynamo.repro.after_aot import run_repro
    with torch.no_grad():
        run_repro(mod, load_args, accuracy=False, command='run', save_dir=None, tracing_mode='real', check_str=None)
"""
INPUT = "    buf0 = reader.storage(None, 16)\n    reader.tensor(buf0, (4,), is_leaf=True)  # arg0_1\n"


def _log(op: str, load_args: str = INPUT, compile_id: int = 0) -> str:
    head = (
        'V1202 07:37:55.859000 1 torch/_inductor/compile_fx.py:1315] {"artifact": {"name": "fx_graph_runnable", '
        f'"encoding": "string"}}, "frame_id": {compile_id}, "frame_compile_id": 0, "attempt": 0, "has_payload": "x"}}\n'
    )
    payload = "".join("\t" + line + "\n" for line in LOGGED.format(op=op, load_args=load_args).splitlines())
    other = 'V1202 07:37:55.900000 1 torch/_dynamo/utils.py:1] {"chromium_event": {}, "has_payload": "y"}\n\t{}\n'
    return head + payload + other


def test_every_graph_of_every_rank_in_order_rank_zero_first(tmp_path: Path):
    (tmp_path / "dedicated_log_torch_trace_rank_1_abc.log").write_text(_log("cos"))
    (tmp_path / "dedicated_log_torch_trace_rank_0_xyz.log").write_text(_log("sin") + _log("exp", compile_id=1))
    (tmp_path / "graph.py").write_text(LOGGED.format(op="abs", load_args=INPUT))
    graphs = traced_graphs(tmp_path)
    assert [(g.rank, g.origin.split(", ")[1] if ", " in g.origin else g.origin) for g in graphs] == [
        (0, "compile 0/0"), (0, "compile 1/0"), (1, "compile 0/0"), (None, "graph.py"),
    ]
    assert "aten.sin" in graphs[0].source and "aten.cos" in graphs[2].source


def test_the_program_compiles_the_module_and_compares_it_without_the_jobs_own_folders(tmp_path: Path):
    (tmp_path / "dedicated_log_torch_trace_x.log").write_text(_log("sin", load_args=""))
    graph = traced_graphs(tmp_path)[0]
    compared = graph.program(compare=True)
    assert "TORCH_TRACE" not in compared and "TORCHINDUCTOR_CACHE_DIR" not in compared
    assert "def load_args(reader):\n    pass\n" in compared  # an empty load_args (no inputs) mended
    assert "compiled = torch.compile(mod)(*args)" in compared
    assert "torch.testing.assert_close(compiled, mod(*args))" in compared
    assert "assert_close" not in graph.program(compare=False)
    compile(compared, "graph.py", "exec")
