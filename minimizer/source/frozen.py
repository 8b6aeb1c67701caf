"""Kernels left as they are: those whose output the pinned failure compares with a reference.

When a script checks its own Triton kernel against torch (``[compared: kernel row_softmax_kernel, softmax]``
in the signature), the kernel is what is under test: any edit to it makes it compute something else, which
fails the same comparison for another reason (a kernel reduced to ``tl.store(out_ptr, 0.0)`` is never close
to a softmax). A compiled call has eager as a twin that such an edit would break too; a kernel has none, so
its text is kept and the reduction works on everything around it.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from minimizer.syntax import parse_python

_COMPARED_KERNEL = re.compile(r"\[compared: ([^\]]*)\]")


def compared_kernels(signature: str) -> list[str]:
    """The kernels whose output a signature's ``[compared: ...]`` part names."""

    found = _COMPARED_KERNEL.search(signature)
    if found is None:
        return []
    return list(dict.fromkeys(re.findall(r"\bkernel (\w+)", found.group(1))))


@dataclass(frozen=True)
class FrozenKernels:
    """The text (as its syntax tree) of each kernel that candidates must keep unchanged."""

    kernels: tuple[tuple[str, str], ...] = ()

    @classmethod
    def of(cls, start: str, signature: str) -> FrozenKernels:
        names = set(compared_kernels(signature))
        if not names:
            return cls()
        return cls(tuple(sorted(_definitions(start, names).items())))

    def why_not(self, text: str) -> str | None:
        """Why ``text`` changes a frozen kernel, or ``None``."""

        if not self.kernels:
            return None
        try:
            now = _definitions(text, {name for name, _ in self.kernels})
        except (SyntaxError, ValueError):
            return "does not parse"
        for name, dumped in self.kernels:
            if now.get(name) != dumped:
                return f"changes the kernel {name}, whose output the failing comparison checks"
        return None


def _definitions(text: str, names: set[str]) -> dict[str, str]:
    return {
        node.name: ast.dump(node)
        for node in parse_python(text).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in names
    }
