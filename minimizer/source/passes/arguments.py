"""Delete arguments of calls: all keyword arguments of a call at once, then each keyword, then positionals."""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import find_all, distinct_candidates, remove_node, remove_nodes


def delete_arguments(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with arguments removed from one call.

    Calls come outer first in source order. Per call: all keyword arguments at once (when there are two or
    more), then each keyword argument in order, then each positional argument from the last to the first
    (trailing positionals are the ones most often optional: `torch.randn(2, 3, 4)` -> `torch.randn(2, 3)`).
    """
    return distinct_candidates(module, _deletions(module))


def _deletions(module: cst.Module) -> Iterator[cst.Module | None]:
    for call in find_all(module, m.Call()):
        keywords = [arg for arg in call.args if arg.keyword is not None]
        positionals = [arg for arg in call.args if arg.keyword is None]
        if len(keywords) > 1:
            yield lambda: remove_nodes(module, keywords)
        for arg in [*keywords, *reversed(positionals)]:
            yield lambda: remove_node(module, arg)
