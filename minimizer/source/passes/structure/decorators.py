"""A helper's decorator dropped: `@torch.no_grad()` on a function that runs a kernel and collects its outputs.

A decorator that sets a mode (`no_grad`, `inference_mode`) or caches (`lru_cache`) is rarely part of the bug, and
while it stands the helper cannot be inlined where it is called. Where it is (a `requires_grad` lost only under
`no_grad`), the candidate fails otherwise and is dropped. Decorators that make the function what it is (a Triton
kernel, a compiled function, a dataclass, a method kind, a registered op) are left alone: without them the program
does something else entirely, and every such candidate would be a wasted run.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all

__all__ = ["drop_decorators"]

# The last part of a decorator's dotted name (called or not) that defines what the function is.
_DEFINING = frozenset({
    "jit", "autotune", "heuristics", "compile", "optimize", "dataclass", "staticmethod", "classmethod", "property",
    "setter", "custom_op", "triton_op", "register_fake", "register_kernel", "register_autograd", "impl", "fixture",
    "contextmanager", "script", "trace",
})


def drop_decorators(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one decorator of a function removed, functions and decorators in source order."""

    def drops() -> Iterator[object]:
        for function in find_all(module, m.FunctionDef()):
            for decorator in function.decorators:  # type: ignore[attr-defined]
                if _last_name(decorator.decorator) not in _DEFINING:
                    kept = [d for d in function.decorators if d is not decorator]  # type: ignore[attr-defined]
                    yield lambda f=function, k=kept: replace_node(module, f, f.with_changes(decorators=k))

    return distinct_candidates(module, drops())


def _last_name(node: cst.BaseExpression) -> str:
    if isinstance(node, cst.Call):
        return _last_name(node.func)
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return node.value if isinstance(node, cst.Name) else ""
