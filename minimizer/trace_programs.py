"""The graphs a failing job compiled, as programs that run alone, from what it left behind: a ``TORCH_TRACE``
folder (each Inductor compile logs an ``fx_graph_runnable`` artifact: the graph as a module, its inputs'
shapes, dtypes and strides, the compile's config) or a folder of such programs.

A job that ran for an hour on eight GPUs cannot be run again per candidate; its graphs can. Each program is made
to show a bug under plain python: its graph module, compiled with ``torch.compile`` and called on inputs of the
logged shapes, dtypes and strides, so a crash shows; asked to compare, its outputs are also checked against the
module's eager ones (``assert_close``), so a wrong value shows. The trace keeps no tensor data (inputs are drawn
at random): a bug that needs particular values does not show from a trace.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

_ARTIFACT = "fx_graph_runnable"
_RANK = re.compile(r"rank_(\d+)")
# Lines the logged program begins with that belong to the job, not the graph: its trace folder and cache.
_JOBS_OWN = re.compile(r"^os\.environ\['(TORCH_TRACE|TORCHINDUCTOR_CACHE_DIR)'\] = .*$", re.MULTILINE)
_EMPTY_LOAD_ARGS = re.compile(r"^def load_args\(reader\):\n(?=\S)", re.MULTILINE)
_MAIN = """if __name__ == '__main__':
    from torch._dynamo.repro.after_aot import run_repro

    mod, args = run_repro(mod, load_args, accuracy=False, command='get_args', save_dir=None, tracing_mode='real', check_str=None)
    compiled = torch.compile(mod)(*args)
{check}"""


@dataclass(frozen=True)
class TracedGraph:
    """One compiled graph's program, and where it came from (a log and its compile id, or a file)."""

    source: str
    origin: str
    rank: int | None = None

    def program(self, *, compare: bool) -> str:
        """The graph's program as it runs here: its module compiled with ``torch.compile`` and called on the
        inputs the log describes (``compare``: and its outputs checked against the module's eager ones), so that
        the oracles, the culprit's ladder and the operator see a compiled call as in any script."""

        text = _JOBS_OWN.sub("", self.source)
        # A graph with no inputs is logged with an empty `load_args` (torch 2.13), which does not parse.
        text = _EMPTY_LOAD_ARGS.sub("def load_args(reader):\n    pass\n", text)
        main = text.find("if __name__ == '__main__':")
        if main < 0:
            return text
        check = "    torch.testing.assert_close(compiled, mod(*args))\n" if compare else ""
        return text[:main] + _MAIN.format(check=check)


def traced_graphs(folder: Path) -> list[TracedGraph]:
    """Every graph program in ``folder``: from its ``TORCH_TRACE`` logs (rank 0 first, in the order compiled),
    then from its ``*.py`` files that are such programs."""

    graphs: list[TracedGraph] = []
    for log in sorted(folder.glob("*.log"), key=lambda p: (_rank(p) or 0, p.name)):
        graphs += _from_log(log)
    for script in sorted(folder.glob("*.py")):
        text = script.read_text(errors="replace")
        if "def load_args(reader)" in text and "class Repro(" in text:
            graphs.append(TracedGraph(text, script.name))
    return graphs


def _from_log(log: Path) -> list[TracedGraph]:
    lines = log.read_text(errors="replace").split("\n")
    found = []
    for i, line in enumerate(lines):
        if f'"{_ARTIFACT}"' not in line or "{" not in line:
            continue
        try:
            meta = json.loads(line[line.index("{"):])
        except ValueError:
            continue
        payload = []
        for following in lines[i + 1:]:
            if not following.startswith("\t"):
                break
            payload.append(following[1:])
        compile_id = f"{meta.get('frame_id', '?')}/{meta.get('frame_compile_id', '?')}"
        found.append(TracedGraph("\n".join(payload) + "\n", f"{log.name}, compile {compile_id}", _rank(log)))
    return found


def _rank(log: Path) -> int | None:
    match = _RANK.search(log.name)
    return int(match.group(1)) if match else None
