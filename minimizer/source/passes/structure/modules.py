"""Turn a module class that is only a `forward` into the plain function it stands for.

`class Block(nn.Module): def forward(self, x): return f(x)` used as `Block()` reads better, and is shorter, as
`def block(x): return f(x)` used as `block`: torch.compile takes functions as well as modules.
"""

from __future__ import annotations

import itertools

from typing import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.scopes import metadata
from minimizer.source.traversal import parent_map, walk

# A line `super().__init__()` (shared with the delegating-module pass).
SUPER_INIT = m.SimpleStatementLine(
    body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Call(func=m.Name("super")), attr=m.Name("__init__"))))]
)


def module_classes_to_functions(module: cst.Module) -> Iterator[cst.Module]:
    """Yield one candidate per top-level class whose body is only `forward` or `__call__` (plus an `__init__` that only calls
    `super().__init__()`), whose `forward` never reads `self`, and whose every use is a call with no arguments.
    The class becomes `def <name in snake case>(...)` and each `Cls()` becomes that name.

    Likewise a class of one other method (`evaluate`), undecorated or a `dataclass` with no fields, that never
    reads `self` and is only used as `Cls().evaluate`: the method becomes a function of its own name."""

    return distinct_candidates(module, itertools.chain(_conversions(module), _method_conversions(module)))


def top_level_classes(module: cst.Module) -> Iterator[tuple[cst.ClassDef, list[cst.CSTNode], dict]]:
    """Each module-level class with the nodes that refer to its name, and the module's scopes (shared with the
    delegating-module pass)."""

    wrapper = metadata(module)
    scopes = wrapper.resolve(ScopeProvider)
    global_scope = scopes[module]
    for statement in module.body:
        if isinstance(statement, cst.ClassDef):
            name = statement.name.value
            uses = [access.node for assignment in global_scope[name] for access in assignment.references]
            yield statement, uses, scopes


def _conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    for statement, uses, scopes in top_level_classes(module):
        forward = _only_forward(statement)
        if forward is None or _reads_self(forward, scopes):
            continue
        name = statement.name.value
        global_scope = scopes[module]
        calls = _zero_argument_calls(module, uses)
        if calls is None:
            continue
        function_name = snake_case(name)
        if function_name in global_scope:
            continue
        params = forward.params.with_changes(params=forward.params.params[1:])
        function = forward.with_changes(name=cst.Name(function_name), params=params, leading_lines=statement.leading_lines)
        replacements: dict[cst.CSTNode, cst.CSTNode] = {statement: function}
        replacements.update({call: cst.Name(function_name) for call in calls})
        yield lambda: replace_nodes(module, replacements)


def _method_conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    for statement, uses, scopes in top_level_classes(module):
        method = _only_method(statement)
        if method is None or _reads_self(method, scopes) or method.name.value in scopes[module]:
            continue
        parents = parent_map(module)
        reads = [parents.get(parents.get(use)) for use in uses]
        if not uses or not all(_reads_method(read, use, method.name.value) for read, use in zip(reads, uses)):
            continue
        params = method.params.with_changes(params=method.params.params[1:])
        function = method.with_changes(params=params, leading_lines=statement.leading_lines)
        replacements: dict[cst.CSTNode, cst.CSTNode] = {statement: function}
        replacements.update({read: cst.Name(method.name.value) for read in reads})
        yield lambda r=replacements: replace_nodes(module, r)


_DATACLASS = m.Decorator(decorator=m.Name("dataclass") | m.Attribute(value=m.Name("dataclasses"), attr=m.Name("dataclass")))


def _only_method(cls: cst.ClassDef) -> cst.FunctionDef | None:
    """The one method of a class that holds nothing else (an `__init__` that only calls `super().__init__()`,
    `pass`), other than `forward` / `__call__`; undecorated, or a `dataclass` with no fields."""

    if cls.bases or not all(m.matches(d, _DATACLASS) for d in cls.decorators):
        return None
    methods = [item for item in cls.body.body if isinstance(item, cst.FunctionDef) and item.name.value != "__init__"]
    if len(methods) != 1 or methods[0].name.value in ("forward", "__call__") or methods[0].decorators:
        return None
    for item in cls.body.body:
        if m.matches(item, m.FunctionDef(name=m.Name("__init__"))):
            if not all(m.matches(line, SUPER_INIT) for line in item.body.body):  # type: ignore[union-attr]
                return None
        elif item is not methods[0] and not m.matches(item, m.SimpleStatementLine(body=[m.Pass()])):
            return None
    return methods[0] if methods[0].params.params else None


def _reads_method(read: cst.CSTNode | None, use: cst.CSTNode, name: str) -> bool:
    """Whether ``read`` is ``Cls().name``, ``use`` being ``Cls``."""

    return m.matches(read, m.Attribute(attr=m.Name(name))) and m.matches(read.value, m.Call(args=[])) and read.value.func is use  # type: ignore[union-attr]


def _only_forward(cls: cst.ClassDef) -> cst.FunctionDef | None:
    forward = None
    for item in cls.body.body:
        if m.matches(item, m.FunctionDef(name=m.Name("forward") | m.Name("__call__"))) and forward is None:
            forward = item
        elif m.matches(item, m.FunctionDef(name=m.Name("__init__"))):
            if not all(m.matches(line, SUPER_INIT) for line in item.body.body):  # type: ignore[union-attr]
                return None
        elif not m.matches(item, m.SimpleStatementLine(body=[m.Pass()])):
            return None
    if forward is None or forward.decorators or len(forward.params.params) < 1:  # type: ignore[union-attr]
        return None
    return forward  # type: ignore[return-value]


def _reads_self(forward: cst.FunctionDef, scopes) -> bool:
    self_name = forward.params.params[0].name.value
    scope = scopes.get(forward.body.body[0]) if forward.body.body else None
    if scope is None:
        return True
    return any(assignment.references for assignment in scope[self_name])


def _zero_argument_calls(module: cst.Module, uses: list[cst.CSTNode]) -> list[cst.Call] | None:
    """The `Cls()` calls that contain each use, or `None` if some use is anything else."""

    finder = _CallFinder(set(map(id, uses)))
    walk(module, finder)
    # `Cls().forward(x)` or `Cls().training` use the instance as an object: a function would not do.
    calls = [call for call in finder.calls if id(call) not in finder.attribute_owners]
    if len(calls) != len(uses) or not uses:
        return None
    return calls


class _CallFinder(cst.CSTVisitor):
    def __init__(self, use_ids: set[int]):
        self.use_ids = use_ids
        self.calls: list[cst.Call] = []
        self.attribute_owners: set[int] = set()

    def visit_Call(self, node: cst.Call) -> None:
        if id(node.func) in self.use_ids and not node.args:
            self.calls.append(node)

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self.attribute_owners.add(id(node.value))


def snake_case(name: str) -> str:
    out = "".join(f"_{c.lower()}" if c.isupper() else c for c in name).lstrip("_")
    return out if out != name else f"{name}_fn"
