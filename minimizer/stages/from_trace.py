"""Before the check, for ``reduce --from-trace DIR``: the first graph the failing job compiled that shows a bug
here under plain python, alone (``minimizer.trace_programs``): compiled and run (a crash), else compared with
eager (a wrong value). Its program is then the script reduced, as any other; the job itself never runs again."""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from minimizer.errors import MinimizerError
from minimizer.runner.plain import run_plain
from minimizer.runner.run_types import Limits
from minimizer.trace_programs import TracedGraph, traced_graphs


def graph_that_fails(folder: Path, limits: Limits, say: Callable[[str], None]) -> tuple[TracedGraph, str]:
    """The first graph of ``folder`` whose program fails under plain python, and that program."""

    graphs = traced_graphs(folder)
    if not graphs:
        raise MinimizerError(
            f"{folder} holds no compiled graph's program (TORCH_TRACE logs with fx_graph_runnable artifacts, or "
            "fx_graph_runnable .py files); run the job with TORCH_TRACE=DIR"
        )
    say(f"{len(graphs)} compiled graph(s) in {folder}: running each alone under plain python")
    for graph in graphs:
        for compare in (False, True):
            program = graph.program(compare=compare)
            run = run_plain(program, "graph.py", None, limits)
            if run.failure is not None:
                say(f"{graph.origin} fails {'compared with eager' if compare else 'compiled alone'}: {run.describe()}")
                return graph, program
    raise MinimizerError(
        f"none of the {len(graphs)} graph(s) in {folder} fails under plain python here, compiled alone or compared "
        "with eager: the bug needs the job's data (a trace keeps none) or code outside its graphs"
    )
