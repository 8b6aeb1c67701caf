"""Shrink the sizes a script gives a library's model: `GPT2Config(n_layer=2, n_embd=64, n_head=4)` becomes
`GPT2Config(n_layer=1, n_embd=32, n_head=1)`.

A library config's defaults mean "big": deleting `n_layer=2` from a `GPT2Config` call saves three tokens and
builds the 124M-parameter model, every candidate after it three times slower. So the sizes a script passes to
a class it did not define are shrunk, never deleted (`delete_arguments` asks `is_library_size`), and this pass
runs before argument deletion: layers, heads and experts go to 1 (any width divides into one head), widths,
intermediate sizes, vocabularies and positions halve; all of a call's sizes at once first, then each alone.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.library_sizes import LIBRARY_COUNTS, is_library_size, script_names
from minimizer.source.traversal import find_all

__all__ = ["shrink_library_configs"]


def shrink_library_configs(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the integer size keywords of one call to a class the script does not define made
    smaller: counts to 1 and widths halved, all of the call's at once, then each alone; calls in source order."""

    return distinct_candidates(module, _shrinkings(module))


def _shrinkings(module: cst.Module) -> Iterator[object]:
    names = script_names(module)
    for call in find_all(module, m.Call()):
        sizes = {
            arg.value: smaller
            for arg in call.args  # type: ignore[attr-defined]
            if is_library_size(call, arg, names) and (smaller := _smaller(arg)) is not None  # type: ignore[arg-type]
        }
        if len(sizes) > 1:
            yield lambda s=sizes: replace_nodes(module, s)
        for literal, smaller in sizes.items():
            yield lambda old=literal, new=smaller: replace_nodes(module, {old: new})


def _smaller(arg: cst.Arg) -> cst.Integer | None:
    if not isinstance(arg.value, cst.Integer):
        return None
    value = arg.value.evaluated_value
    target = 1 if arg.keyword.value in LIBRARY_COUNTS else value // 2  # type: ignore[union-attr]
    return cst.Integer(str(target)) if 0 < target < value else None
