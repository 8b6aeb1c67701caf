"""The source format: parse a script into a libcst Module, render it back, measure it, list its passes."""

from __future__ import annotations

import libcst as cst

from minimizer.metrics import count_tokens
from minimizer.reduce.scheduler import Pass
from minimizer.source.rendering import render


def parse_module(text: str) -> cst.Module:
    return cst.parse_module(text)


def render_module(module: cst.Module) -> str:
    return render(module)


def source_size(module: cst.Module) -> int:
    """Tokens of code: what the reduction minimizes."""

    return count_tokens(render_module(module))


def source_passes() -> list[Pass[cst.Module]]:
    """Fresh pass objects in their first-round order: cheap, coarse deletions first, fine value shrinking last."""

    from minimizer.source.passes import SOURCE_PASSES

    return [Pass.of(fn) for fn in SOURCE_PASSES]
