"""``reduce --from-trace``: the graph a job's TORCH_TRACE logged, found failing alone (a real torch 2.13 CPU bug,
pytorch#175966: int64 arange times an int32-sized constant computed in 32 bits)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from minimizer.runner.run_types import Limits
from minimizer.stages.from_trace import graph_that_fails

JOB = """import torch


def timestamps():
    return torch.arange(0, 4, dtype=torch.int64) * torch.tensor([10**9])


assert torch.equal(torch.compile(timestamps)(), timestamps()), "compiled timestamps differ"
"""


def test_the_graph_that_fails_compared_with_eager_is_found_without_running_the_job_again(tmp_path: Path):
    job = tmp_path / "job.py"
    job.write_text(JOB)
    trace = tmp_path / "trace"
    env = {**os.environ, "TORCH_TRACE": str(trace)}
    subprocess.run([sys.executable, str(job)], env=env, cwd=tmp_path, capture_output=True, timeout=300)
    said = []
    graph, program = graph_that_fails(trace, Limits(timeout=300), said.append)
    assert "compile 0/0" in graph.origin
    assert "torch.testing.assert_close(compiled, mod(*args))" in program  # alone it ran: the comparison fails
    assert any("fails compared with eager" in line for line in said)
