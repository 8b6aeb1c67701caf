"""Collapse module classes that only hold one submodule and call it: `Block(c)` becomes what `Block` built.

Realistic models nest (`Net -> Encoder -> Layer -> Attention`), and once a reduction has emptied the levels
in between, each is a class whose `__init__` builds one thing and whose `forward` calls it:

    class Block(nn.Module):
        def __init__(self, channels):
            super().__init__()
            self.excite = SqueezeExcite(channels, 4)

        def forward(self, x):
            return self.excite(x)

Every `Block(c)` can then be `SqueezeExcite(c, 4)` and the class can go. Deleting statements cannot do this
(each level is needed, the chain is not), and neither can turning a class into a function (it holds state).
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.structure.modules import SUPER_INIT, top_level_classes
from minimizer.source.traversal import find_all, walk

__all__ = ["collapse_delegating_modules"]

_DOCSTRING = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])


def collapse_delegating_modules(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one delegating class removed and each of its constructions replaced by what its
    `__init__` stores, the constructor's arguments put in for its parameters.

    A delegating class is a top-level class whose body is an `__init__` (after an optional
    `super().__init__()`, exactly `self.NAME = EXPR`, `EXPR` not reading `self`) and a `forward` that is
    `return self.NAME(p1, ..., pn)` with its own parameters in order. Every reference to the class must be a
    call with positional arguments only (missing ones take the parameter's default); a parameter that `EXPR`
    reads more than once needs a name or a literal as its argument (no side effect is repeated).
    """

    return distinct_candidates(module, _collapses(module))


def _collapses(module: cst.Module) -> Iterator[cst.Module | None]:
    for statement, uses, _ in top_level_classes(module):
        found = _delegation(statement)
        if found is None:
            continue
        params, built = found
        calls = _constructions(module, uses)
        if calls is None:
            continue
        replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        for call in calls:
            bound = _bind(params, call)
            if bound is None or not _safe_to_substitute(built, bound):
                break
            replacements[call] = _substitute(built, bound)
        else:
            replacements[statement] = cst.RemovalSentinel.REMOVE  # type: ignore[assignment]
            yield lambda: _replace(module, replacements)


def _delegation(cls: cst.ClassDef) -> tuple[cst.Parameters, cst.BaseExpression] | None:
    """(the `__init__` parameters after `self`, what it stores) for a delegating class, else `None`."""

    init = forward = None
    for item in cls.body.body:
        if m.matches(item, m.FunctionDef(name=m.Name("__init__"))):
            init = item
        elif m.matches(item, m.FunctionDef(name=m.Name("forward"))):
            forward = item
        elif not (m.matches(item, _DOCSTRING) or m.matches(item, m.SimpleStatementLine(body=[m.Pass()]))):
            return None
    if init is None or forward is None or init.decorators or forward.decorators:  # type: ignore[union-attr]
        return None
    lines = [line for line in init.body.body if not m.matches(line, SUPER_INIT | _DOCSTRING)]  # type: ignore[union-attr]
    if len(lines) != 1:
        return None
    store = m.SimpleStatementLine(
        body=[m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name("self"), attr=m.Name()))])]
    )
    if not m.matches(lines[0], store):
        return None
    assign = lines[0].body[0]  # type: ignore[union-attr]
    attr = assign.targets[0].target.attr.value  # type: ignore[union-attr]
    built = assign.value
    if m.findall(built, m.Name("self")) or _has_star_params(init.params):  # type: ignore[union-attr]
        return None
    forward_params = [p.name.value for p in forward.params.params[1:]]  # type: ignore[union-attr]
    if _has_star_params(forward.params) or any(p.default for p in forward.params.params):  # type: ignore[union-attr]
        return None
    call = m.Call(
        func=m.Attribute(value=m.Name("self"), attr=m.Name(attr)),
        args=[m.Arg(value=m.Name(name), keyword=None, star="") for name in forward_params],
    )
    body = forward.body.body  # type: ignore[union-attr]
    if len(body) != 1 or not m.matches(body[0], m.SimpleStatementLine(body=[m.Return(value=call)])):
        return None
    params = init.params.with_changes(params=init.params.params[1:])  # type: ignore[union-attr]
    return params, built


def _has_star_params(params: cst.Parameters) -> bool:
    return bool(params.posonly_params or params.kwonly_params) or isinstance(params.star_arg, cst.Param) or bool(
        params.star_kwarg
    )


def _constructions(module: cst.Module, uses: list[cst.CSTNode]) -> list[cst.Call] | None:
    """The calls `Cls(...)` holding each use, or `None` when a use is anything else (a base class, a value)."""

    ids = {id(use) for use in uses}
    calls = [call for call in find_all(module, m.Call()) if id(call.func) in ids]  # type: ignore[union-attr]
    if not uses or len(calls) != len(uses):
        return None
    return calls  # type: ignore[return-value]


def _bind(params: cst.Parameters, call: cst.Call) -> dict[str, cst.BaseExpression] | None:
    if any(arg.keyword is not None or arg.star for arg in call.args) or len(call.args) > len(params.params):
        return None
    bound: dict[str, cst.BaseExpression] = {}
    for index, param in enumerate(params.params):
        if index < len(call.args):
            bound[param.name.value] = call.args[index].value
        elif param.default is not None:
            bound[param.name.value] = param.default
        else:
            return None
    return bound


def _safe_to_substitute(built: cst.BaseExpression, bound: dict[str, cst.BaseExpression]) -> bool:
    counts = _substitutable_names(built)
    for name, value in bound.items():
        uses = sum(1 for node in counts if node.value == name)
        simple = isinstance(value, (cst.Name, cst.Integer, cst.Float, cst.SimpleString)) or m.matches(
            value, m.Attribute(value=m.Name())
        )
        if uses > 1 and not simple:
            return False
    return True


def _substitutable_names(expression: cst.BaseExpression) -> list[cst.Name]:
    """Names in `expression` that are variables (not attribute names after a dot, not keyword names)."""

    excluded: set[int] = set()

    class Finder(cst.CSTVisitor):
        def __init__(self) -> None:
            self.names: list[cst.Name] = []

        def visit_Attribute(self, node: cst.Attribute) -> None:
            excluded.add(id(node.attr))

        def visit_Arg(self, node: cst.Arg) -> None:
            if node.keyword is not None:
                excluded.add(id(node.keyword))

        def visit_Name(self, node: cst.Name) -> None:
            self.names.append(node)

    finder = Finder()
    walk(expression, finder)
    return [name for name in finder.names if id(name) not in excluded]


def _substitute(built: cst.BaseExpression, bound: dict[str, cst.BaseExpression]) -> cst.BaseExpression:
    targets = {id(name) for name in _substitutable_names(built) if name.value in bound}

    class Substitute(cst.CSTTransformer):
        def leave_Name(self, original: cst.Name, updated: cst.Name) -> cst.BaseExpression:
            return bound[original.value] if id(original) in targets else updated

    return built.visit(Substitute())  # type: ignore[return-value]


def _replace(module: cst.Module, replacements: dict[cst.CSTNode, object]) -> cst.Module:
    class Replace(cst.CSTTransformer):
        def on_leave(self, original: cst.CSTNode, updated: cst.CSTNode):  # type: ignore[override]
            return replacements.get(original, updated)

    return module.visit(Replace())
