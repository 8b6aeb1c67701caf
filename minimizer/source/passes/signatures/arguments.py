"""Arguments of calls: delete them (all keyword arguments of a call at once, then each keyword, then
positionals), and pass a keyword argument by position."""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import remove_node, remove_nodes, replace_node
from minimizer.source.passes.library_sizes import is_library_size, script_names
from minimizer.source.patterns import TORCH_COMPILE_CALL
from minimizer.source.traversal import find_all


def delete_arguments(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with arguments removed from one call.

    Calls come outer first in source order. Per call: all keyword arguments at once (when there are two or
    more), then each keyword argument in order, then each positional argument from the last to the first
    (trailing positionals are the ones most often optional: `torch.randn(2, 3, 4)` -> `torch.randn(2, 3)`).
    A size given to a library's class (`GPT2Config(n_layer=2)`) is never deleted: its default is big
    (``library_configs``); nor a backend cheaper than Inductor given to `torch.compile` (`backend="eager"`):
    without it the repro compiles with Inductor, costlier to run than the script.
    """
    return distinct_candidates(module, _deletions(module))


_CHEAPER_BACKEND = m.Arg(
    keyword=m.Name("backend"),
    value=m.SimpleString(value=m.MatchIfTrue(lambda s: s[1:-1] in ("eager", "aot_eager", "aot_eager_decomp_partition"))),
)


def _deletions(module: cst.Module) -> Iterator[cst.Module | None]:
    names = script_names(module)
    for call in find_all(module, m.Call()):
        compiles = m.matches(call, TORCH_COMPILE_CALL)
        keywords = [
            arg for arg in call.args
            if arg.keyword is not None and not is_library_size(call, arg, names)
            and not (compiles and m.matches(arg, _CHEAPER_BACKEND))
        ]
        positionals = [arg for arg in call.args if arg.keyword is None]
        if len(keywords) > 1:
            yield lambda: remove_nodes(module, keywords)
        for arg in [*keywords, *reversed(positionals)]:
            yield lambda: remove_node(module, arg)


# Keywords that are keyword-only wherever torch takes them (`torch.randn(2, dtype=...)`): never tried as positional.
_KEYWORD_ONLY = frozenset(
    {"dtype", "device", "requires_grad", "generator", "out", "layout", "pin_memory", "memory_format", "mutates_args"}
)


def keywords_to_positional(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with the first keyword argument of one call passed by position, calls outer first in source
    order (`torch.logsumexp(x, dim=-1)` -> `torch.logsumexp(x, -1)`; the next keyword gets its turn next round).

    Skipped: keywords torch takes only by keyword (`dtype`, `device`, `requires_grad`, ...), calls of
    `torch.compile` (all of its options are keyword-only), and calls with a starred argument.
    """
    return distinct_candidates(module, _by_position(module))


def _by_position(module: cst.Module) -> Iterator[cst.Module | None]:
    for call in find_all(module, m.Call()):
        if m.matches(call, TORCH_COMPILE_CALL) or any(arg.star for arg in call.args):
            continue
        first = next((arg for arg in call.args if arg.keyword is not None), None)
        if first is not None and first.keyword.value not in _KEYWORD_ONLY:
            positional = first.with_changes(keyword=None, equal=cst.MaybeSentinel.DEFAULT)
            yield lambda first=first, positional=positional: replace_node(module, first, positional)
