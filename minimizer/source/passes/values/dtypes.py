"""A pass that takes precision changes out of a script: every dtype becomes the default float32.

Bugs that need float16 or float64 to show are rarer than scripts that carry dtypes by habit; each dtype
detail that survives this pass is one the bug needs.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.traversal import walk

__all__ = ["simplify_dtypes"]

_TO_FLOAT32 = ("float64", "double", "float16", "half", "bfloat16")
_DTYPE_NAMES = _TO_FLOAT32 + (
    "float32", "float", "int64", "long", "int32", "int", "int16", "short", "int8", "uint8", "bool",
    "complex64", "complex128", "cfloat", "cdouble", "float8_e4m3fn", "float8_e5m2",
)
_CAST_METHODS = ("double", "half", "bfloat16", "float")


def _torch_attribute(names: tuple[str, ...]) -> m.Attribute:
    return m.Attribute(value=m.Name("torch"), attr=m.OneOf(*(m.Name(n) for n in names)))


_LOW_OR_HIGH_PRECISION = _torch_attribute(_TO_FLOAT32)
_ANY_DTYPE = _torch_attribute(_DTYPE_NAMES)
_DTYPE_KEYWORD = m.Arg(keyword=m.Name("dtype"))
# `x.double()`, and `x.to(torch.half)` / `x.to(dtype=...)`: a cast whose only argument is a dtype. `x.to(device)`
# does not match, because a device moves data without changing it. `x.to()` matches because it is what
# `x.to(dtype=...)` becomes once the keyword is dropped, when all edits are made at once.
_CAST_CALL = m.Call(func=m.Attribute(attr=m.OneOf(*(m.Name(n) for n in _CAST_METHODS + ("to",)))), args=[]) | m.Call(
    func=m.Attribute(attr=m.Name("to")), args=[m.Arg(value=_ANY_DTYPE, keyword=None) | _DTYPE_KEYWORD]
)


def simplify_dtypes(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with dtype details removed.

    The edits: `torch.float64/double/float16/half/bfloat16` become `torch.float32`; `dtype=` keyword arguments
    are dropped; casts `x.double()`, `x.half()`, `x.bfloat16()`, `x.float()` and `x.to(<dtype>)` become `x`.
    The first candidate makes every edit at once, then each edit alone follows in source order.
    """
    return distinct_candidates(module, _dtype_candidates(module))


def _dtype_candidates(module: cst.Module) -> Iterator[cst.Module]:
    sites = _dtype_sites(module)
    if len(sites) > 1:
        yield module.visit(_DtypeSimplifier(only=None))
    for site in sites:
        yield module.visit(_DtypeSimplifier(only=site))


def _dtype_sites(module: cst.Module) -> list[cst.CSTNode]:
    """Every node one edit applies to, in source order."""
    collector = _SiteCollector()
    walk(module, collector)
    return collector.sites


class _SiteCollector(cst.CSTVisitor):
    def __init__(self) -> None:
        super().__init__()
        self.sites: list[cst.CSTNode] = []
        self._subsumed: set[int] = set()

    def on_visit(self, node: cst.CSTNode) -> bool:
        if id(node) not in self._subsumed and _simplified(node) is not node:
            self.sites.append(node)
        if m.matches(node, _CAST_CALL):
            # In `x.to(dtype=d)`, dropping the keyword alone gives `x.to()`: the same as dropping the cast.
            self._subsumed.update(id(arg) for arg in node.args)
        return True


def _simplified(node: cst.CSTNode) -> cst.CSTNode | cst.RemovalSentinel:
    """The node after its dtype edit; the node itself when no edit applies."""
    if m.matches(node, _LOW_OR_HIGH_PRECISION):
        return node.with_changes(attr=cst.Name("float32"))
    if m.matches(node, _DTYPE_KEYWORD):
        return cst.RemovalSentinel.REMOVE
    if m.matches(node, _CAST_CALL):
        # The receiver of an attribute is already atomic or parenthesized, so it can stand on its own.
        return node.func.value
    return node


class _DtypeSimplifier(cst.CSTTransformer):
    """Apply the dtype edit at `only` (a node of the visited module), or at every site when `only` is None.

    Edits are made bottom-up on updated nodes so that nested sites (`x.double().half()`) compose.
    """

    def __init__(self, only: cst.CSTNode | None) -> None:
        super().__init__()
        self._only = only

    def on_leave(self, original_node, updated_node):
        if self._only is None or original_node is self._only:
            updated_node = _simplified(updated_node)
        if m.matches(original_node, m.Call()) and m.matches(updated_node, m.Call()) and len(updated_node.args) != len(original_node.args):
            updated_node = updated_node.with_changes(args=_without_trailing_comma(updated_node.args))
        return updated_node


def _without_trailing_comma(args: tuple[cst.Arg, ...]) -> tuple[cst.Arg, ...]:
    # Dropping the last argument leaves `f(x, )`: valid, but a token larger than needed.
    if args and isinstance(args[-1].comma, cst.Comma):
        return (*args[:-1], args[-1].with_changes(comma=cst.MaybeSentinel.DEFAULT))
    return args
