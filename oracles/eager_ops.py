"""One aten operator run by its eager kernel inside Inductor, and the operators a run's graphs hold: how the
culprit is told down to the operator (``minimizer.stages.operator``), through the environment.

A bug in Inductor is most often one operator's lowering or decomposition. Run with that operator as an Inductor
fallback (its eager kernel called from the compiled code, no decomposition, no lowering), the bug goes away;
with any other operator so, it stays. The operators to try are those AOTAutograd hands on before any
decomposition: a run with the recording backend (AOTAutograd, its graphs run eagerly) writes them down.
"""

from __future__ import annotations

import json
import os
from typing import Any

EAGER_OPS_VARIABLE = "MINIMIZER_EAGER_OPS"  # comma-separated: aten.remainder.Tensor,...
RECORD_OPS_VARIABLE = "MINIMIZER_RECORD_OPS"  # a file the recording backend appends each graph's operators to


def run_eagerly_where_asked() -> None:
    """Make each operator the environment names an Inductor fallback, before anything compiles (the harness's
    install). Inductor's graph cache is off then: a graph compiled before with the operator lowered would come
    back from it."""

    names = [n for n in os.environ.get(EAGER_OPS_VARIABLE, "").split(",") if n]
    if not names:
        return
    import torch._inductor.config as config
    from torch._inductor import decomposition, lowering

    config.fx_graph_cache = False
    for name in names:
        op = aten_operator(name)
        if op is not None:
            decomposition.decompositions.pop(op, None)
            lowering.make_fallback(op, warn=False, override_decomp=True)


def aten_operator(name: str) -> Any:
    """``torch.ops.aten.remainder.Tensor`` for ``aten.remainder.Tensor``; ``None`` where there is none."""

    import torch

    namespace, _, rest = name.partition(".")
    packet, _, overload = rest.partition(".")
    try:
        return getattr(getattr(getattr(torch.ops, namespace), packet), overload or "default")
    except AttributeError:
        return None


def recording_backend() -> Any:
    """AOTAutograd with no decompositions, its graphs run eagerly, each graph's aten operators appended to the
    file ``RECORD_OPS_VARIABLE`` names (one JSON list a line), forward and backward."""

    from torch._dynamo.backends.common import aot_autograd

    path = os.environ[RECORD_OPS_VARIABLE]

    def record(gm: Any, example_inputs: Any) -> Any:
        operators = [str(node.target) for node in gm.graph.nodes if node.op == "call_function" and _is_aten(node.target)]
        with open(path, "a") as out:
            out.write(json.dumps(operators) + "\n")
        return gm.forward

    return aot_autograd(fw_compiler=record, bw_compiler=record)


def read_operators(path: str) -> list[str]:
    """The operators the recording backend wrote, each once, in the order the graphs held them first."""

    seen: dict[str, None] = {}
    try:
        with open(path) as recorded:
            for line in recorded:
                seen.update(dict.fromkeys(json.loads(line)))
    except (OSError, ValueError):
        return []
    return list(seen)


def _is_aten(target: Any) -> bool:
    return str(target).startswith("aten.") and hasattr(target, "_schema")
