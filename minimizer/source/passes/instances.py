"""Turn a class built once, for one method, into that method as a function and its state as variables.

Realistic scripts wrap a few lines in a class: `class PenaltyLoss: def __init__(self): self.weight = 1.0` and
`def __call__(self, z): ...`, or an `nn.Module` whose `__init__` builds two layers for `forward`. Once the
repro builds it once and calls one method, the class is a layer of indirection: its attributes can be
variables and the method a function, `self.weight` -> `weight`, `PenaltyLoss()` -> `penalty_loss`.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m

from minimizer.source.cst_utils import distinct_candidates, try_build
from minimizer.source.passes.modules import SUPER_INIT, snake_case, top_level_classes

__all__ = ["single_instances_to_functions"]

# Methods that calling the instance runs: `Cls()(x)` becomes `cls(x)`.
_CALLED = ("forward", "__call__")


def single_instances_to_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield one candidate per top-level class that is built exactly once, with no arguments, in a module-level
    statement, and used for one method.

    The class's `__init__` may only call `super().__init__()` and assign `self.NAME = expression` (its
    parameters, all with defaults, become those defaults); the one other method may read `self` only as
    `self.NAME` for those names. `forward` / `__call__` classes: `Cls()` becomes the function (named in snake
    case); another method `run`: `Cls().run` becomes `run`. The attributes become module-level variables of
    the same names, assigned just before the statement that built the instance (where the class's `__init__`
    ran). Names already bound in the module are never reused.
    """

    return distinct_candidates(module, _conversions(module))


def _conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    for cls, uses, scopes in top_level_classes(module):
        parts = _init_and_method(cls)
        if parts is None or len(uses) != 1:
            continue
        init, method = parts
        attributes = _attributes(init)
        if attributes is None:
            continue
        self_name = method.params.params[0].name.value if method.params.params else None
        reads = _self_reads(method, self_name)
        if reads is None or not set(reads.values()) <= set(attributes):
            continue
        # Names the module binds or reads outside the class, and the method's own: an attribute may take none.
        outside = set().union(*(_names_in_use(statement) for statement in module.body if statement is not cls))
        if set(attributes) & (outside | _names_in_use(method.params) | _names_in_use(method.body)):
            continue
        use = _construction(module, uses[0], method.name.value)
        if use is None:
            continue
        built, replaced = use
        function_name = snake_case(cls.name.value) if method.name.value in _CALLED else method.name.value
        if function_name in outside or function_name in attributes:
            continue
        statement = _top_level_statement(module, built)
        if statement is None or statement is cls:
            continue
        body = _swap(method.body, {node: cst.Name(name) for node, name in reads.items()})
        function = method.with_changes(
            name=cst.Name(function_name),
            params=method.params.with_changes(params=method.params.params[1:]),
            body=body,
            leading_lines=cls.leading_lines,
            decorators=(),
        )
        assignments = [
            cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(name))], value)])
            for name, value in attributes.items()
        ]
        if not assignments:
            continue  # a class without state: modules.py's conversion
        yield try_build(lambda: _rebuild(module, cls, function, statement, assignments, replaced, function_name))


def _rebuild(module, cls, function, statement, assignments, replaced, function_name) -> cst.Module:
    body = []
    for item in module.body:
        if item is cls:
            body.append(function)
            continue
        if item is statement:
            assignments[0] = assignments[0].with_changes(leading_lines=item.leading_lines)
            body.extend(assignments)
            item = _swap(item, {replaced: cst.Name(function_name)}).with_changes(leading_lines=())
        body.append(item)
    return module.with_changes(body=body)


def _init_and_method(cls: cst.ClassDef) -> tuple[cst.FunctionDef | None, cst.FunctionDef] | None:
    """The class's `__init__` (or None) and its one other method; None for anything else in the body (class
    attributes, decorators, bases other than a plain name or `nn.Module`-like attribute, a docstring is fine)."""

    if cls.decorators or any(arg.keyword is not None for arg in cls.bases):
        return None
    init, methods = None, []
    for item in cls.body.body:
        if isinstance(item, cst.FunctionDef):
            if item.decorators:
                return None
            if item.name.value == "__init__":
                init = item
            else:
                methods.append(item)
        elif not m.matches(item, m.SimpleStatementLine(body=[m.Pass() | m.Expr(value=m.SimpleString())])):
            return None
    if len(methods) != 1 or not methods[0].params.params:
        return None
    if methods[0].params.star_arg is not cst.MaybeSentinel.DEFAULT or methods[0].params.star_kwarg is not None:
        return None
    return init, methods[0]


def _attributes(init: cst.FunctionDef | None) -> dict[str, cst.BaseExpression] | None:
    """`{name: expression}` of `self.name = expression` lines, the parameters' defaults put in; None when the
    `__init__` does anything else or a parameter has no default."""

    if init is None:
        return {}
    params = init.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params:
        return None
    if not params.params:
        return None
    self_name = params.params[0].name.value
    defaults: dict[str, cst.BaseExpression] = {}
    for param in params.params[1:]:
        if param.default is None:
            return None
        defaults[param.name.value] = param.default
    attributes: dict[str, cst.BaseExpression] = {}
    for line in init.body.body:
        if m.matches(line, SUPER_INIT) or m.matches(line, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])):
            continue
        pattern = m.SimpleStatementLine(
            body=[m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name(self_name), attr=m.Name()))])]
        )
        if not m.matches(line, pattern):
            return None
        assign = line.body[0]  # type: ignore[union-attr]
        value = assign.value
        if m.findall(value, m.Name(self_name)) or m.findall(value, m.Lambda() | m.GeneratorExp() | m.ListComp()):
            return None  # reads the instance, or binds names of its own that a substitution could capture
        names = {n: defaults[n.value] for n in m.findall(value, m.Name()) if n.value in defaults}  # type: ignore[union-attr]
        value = _swap(value, names)
        name = assign.targets[0].target.attr.value
        if name in attributes:
            return None
        attributes[name] = value
    return attributes


def _self_reads(method: cst.FunctionDef, self_name: str | None) -> dict[cst.Attribute, str] | None:
    """Each `self.NAME` read in the method with its name; None when `self` is used otherwise (stored into,
    passed on, a method of the instance called) or rebound."""

    if self_name is None:
        return None
    reads: dict[cst.Attribute, str] = {}
    self_nodes = m.findall(method.body, m.Name(self_name))
    for attribute in m.findall(method.body, m.Attribute(value=m.Name(self_name), attr=m.Name())):
        reads[attribute] = attribute.attr.value  # type: ignore[union-attr]
    if len(self_nodes) != len(reads):
        return None
    stored = m.findall(method.body, m.AssignTarget(target=m.Attribute(value=m.Name(self_name))))
    stored += m.findall(method.body, m.AugAssign(target=m.Attribute(value=m.Name(self_name))))
    stored += m.findall(method.body, m.AnnAssign(target=m.Attribute(value=m.Name(self_name))))
    return None if stored else reads


def _construction(module: cst.Module, use: cst.CSTNode, method: str) -> tuple[cst.Call, cst.CSTNode] | None:
    """The `Cls()` call of the one use and the node to replace by the function: the call itself for a called
    class, `Cls().method` otherwise."""

    calls = [call for call in m.findall(module, m.Call()) if call.func is use]  # type: ignore[union-attr]
    if len(calls) != 1 or calls[0].args:
        return None
    call = calls[0]
    if method in _CALLED:
        owners = [a for a in m.findall(module, m.Attribute()) if a.value is call]  # type: ignore[union-attr]
        return None if owners else (call, call)
    owners = [a for a in m.findall(module, m.Attribute(attr=m.Name(method))) if a.value is call]  # type: ignore[union-attr]
    return (call, owners[0]) if len(owners) == 1 else None


def _top_level_statement(module: cst.Module, node: cst.CSTNode) -> cst.CSTNode | None:
    for statement in module.body:
        if any(found is node for found in m.findall(statement, m.Call())):
            return statement
    return None


class _Swapper(cst.CSTTransformer):
    def __init__(self, mapping: dict) -> None:
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        return self.mapping.get(original_node, updated_node)


def _swap(node, mapping: dict):
    """`node` with the nodes that are keys of `mapping` (by identity) swapped for their values."""

    return node.visit(_Swapper(mapping)) if mapping else node


class _NameCollector(cst.CSTVisitor):
    """Every identifier the module uses as a variable (not the `attr` of `a.attr`, not a keyword name)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        node.value.visit(self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        node.value.visit(self)
        return False


def _names_in_use(node: cst.CSTNode) -> set[str]:
    collector = _NameCollector()
    node.visit(collector)
    return collector.names
