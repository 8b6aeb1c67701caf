"""Turn a class built once, for one method, into that method as a function and its state as variables.

Realistic scripts wrap a few lines in a class: `class PenaltyLoss: def __init__(self): self.weight = 1.0` and
`def __call__(self, z): ...`, or an `nn.Module` whose `__init__` builds two layers for `forward`. Once the
repro builds it once and calls one method, the class is a layer of indirection: its attributes can be
variables and the method a function, `self.weight` -> `weight`, `PenaltyLoss()` -> `penalty_loss`.
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
from minimizer.source.passes.structure.bodies import bound_arguments, target_names
from minimizer.source.passes.structure.modules import SUPER_INIT, snake_case, top_level_classes
from minimizer.source.substitution import swap_nodes, as_operand, bind_names
from minimizer.source.traversal import walk, find_all, parent_map

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

    An instance bound to a name (`bank = FeatureBank(rows)`, assigned once at module level) may have several
    methods, or none besides `__init__`, and constructor arguments (bound to the parameters; see `_attributes`)
    when every use of the name reads a member: `bank.features` -> `features`, `bank.snapshot()` -> `snapshot()`, `bank(x)` -> the called
    method's function; the assignment becomes the attributes' assignments.

    A class with only an `__init__`, built once to read one attribute (`Batch(config).inputs`), becomes the
    expression that attribute was assigned (the constructor's arguments bound in).
    """

    conversions = itertools.chain(_conversions(module), _bound_conversions(module), _temporary_reads(module))
    return distinct_candidates(module, conversions)


def _conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    for cls, uses, scopes in top_level_classes(module):
        parts = _init_and_method(cls)
        if parts is None or len(uses) != 1:
            continue
        init, method = parts
        attributes = _attributes(init)
        if not attributes:
            continue  # None: not a plain `__init__`; empty: a class without state (modules.py's conversion)
        self_name = method.params.params[0].name.value
        reads = _self_reads(method, self_name)
        if reads is None or not set(reads.values()) <= set(attributes):
            continue
        outside = set().union(*(_names_in_use(statement) for statement in module.body if statement is not cls))
        named = _variables_for(attributes, outside, [method], snake_case(cls.name.value), _self_name(init))
        if named is None:
            continue
        aliases, attributes = named
        use = _construction(module, uses[0], method.name.value)
        if use is None:
            continue
        built, replaced = use
        function_name = snake_case(cls.name.value) if method.name.value in _CALLED else method.name.value
        if function_name in outside or function_name in attributes or function_name in aliases.values():
            continue
        statement = _top_level_statement(module, built)
        if statement is None or statement is cls:
            continue
        body = swap_nodes(method.body, {node: cst.Name(aliases.get(name, name)) for node, name in reads.items()})
        function = method.with_changes(
            name=cst.Name(function_name),
            params=method.params.with_changes(params=method.params.params[1:]),
            body=body,
            leading_lines=cls.leading_lines,
            decorators=(),
        )
        assignments = _assignments(attributes, statement.leading_lines) if attributes else []
        yield lambda: _rebuild(module, cls, function, statement, assignments, replaced, function_name)


def _variables_for(
    attributes: dict[str, cst.BaseExpression],
    outside: set[str],
    methods: list[cst.FunctionDef],
    prefix: str,
    self_name: str,
) -> tuple[dict[str, str], dict[str, cst.BaseExpression]] | None:
    """The name each attribute is read as once the instance is gone, and the variables to assign; None when no
    names fit.

    `self.probe = probe`: reads of the attribute read the name itself, no variable needed. Other attributes
    become variables of their own names, unless the module (`outside`: what it binds or reads outside the class)
    or a method uses that name: then the prefix goes in front (`compiled` -> `monitor_compiled`).
    """

    aliases = {name: value.value for name, value in attributes.items() if isinstance(value, cst.Name)}
    parameters = set().union(*(_names_in_use(method.params) for method in methods))
    own = parameters | set().union(*(_names_in_use(method.body) for method in methods))
    if set(aliases.values()) & (parameters | set().union(*(_stored_names(method.body) for method in methods))):
        return None  # a method binds the aliased name itself
    rest = {name: value for name, value in attributes.items() if name not in aliases}
    taken = outside | own | set(aliases.values())
    renamed = {name: f"{prefix}_{name}" if name in taken else name for name in rest}
    if set(renamed.values()) & taken or len(set(renamed.values())) != len(renamed):
        return None
    reads_as = aliases | renamed
    earlier = m.Attribute(value=m.Name(self_name), attr=m.Name())
    values = {
        renamed[name]: swap_nodes(value, {a: cst.Name(reads_as[a.attr.value]) for a in m.findall(value, earlier)})  # type: ignore[union-attr]
        for name, value in rest.items()
    }
    return reads_as, values


def _temporary_reads(module: cst.Module) -> Iterator[cst.Module | None]:
    parents = parent_map(module)
    for cls, uses, _ in top_level_classes(module):
        inits = [item for item in cls.body.body if isinstance(item, cst.FunctionDef)]
        if len(uses) != 1 or len(inits) != 1 or inits[0].name.value != "__init__":
            continue
        if any(not isinstance(item, cst.FunctionDef) and not m.matches(item, _DOCSTRING_OR_PASS) for item in cls.body.body):
            continue
        call = parents.get(uses[0])
        read = parents.get(call)
        if not isinstance(call, cst.Call) or call.func is not uses[0] or not isinstance(read, cst.Attribute):
            continue
        if read.value is not call:
            continue
        attributes = _attributes(inits[0], call.args)
        if not attributes or read.attr.value not in attributes:
            continue
        earlier = m.Attribute(value=m.Name(_self_name(inits[0])), attr=m.Name())
        resolved: dict[str, cst.BaseExpression] = {}
        for name, value in attributes.items():
            reads = {a: resolved[a.attr.value] for a in m.findall(value, earlier)}  # type: ignore[union-attr]
            resolved[name] = as_operand(swap_nodes(value, reads))
        replacements = {read: resolved[read.attr.value], cls: cst.RemovalSentinel.REMOVE}
        yield lambda r=replacements: replace_nodes(module, r)


_DOCSTRING_OR_PASS = m.SimpleStatementLine(body=[m.Pass() | m.Expr(value=m.SimpleString())])


def _self_name(init: cst.FunctionDef | None) -> str:
    return init.params.params[0].name.value if init is not None else "self"


def _assignments(attributes: dict[str, cst.BaseExpression], leading_lines) -> list[cst.SimpleStatementLine]:
    """`name = expression` per attribute, the first taking the place (and the blank lines) of the statement
    that built the instance."""

    lines = [cst.SimpleStatementLine([cst.Assign([cst.AssignTarget(cst.Name(n))], v)]) for n, v in attributes.items()]
    lines[0] = lines[0].with_changes(leading_lines=leading_lines)
    return lines


def _rebuild(module, cls, function, statement, assignments, replaced, function_name) -> cst.Module:
    body = []
    for item in module.body:
        if item is cls:
            body.append(function)
            continue
        if item is statement:
            body.extend(assignments)
            item = swap_nodes(item, {replaced: cst.Name(function_name)})
            item = item.with_changes(leading_lines=()) if assignments else item
        body.append(item)
    return module.with_changes(body=body)


def _init_and_method(cls: cst.ClassDef) -> tuple[cst.FunctionDef | None, cst.FunctionDef] | None:
    """The class's `__init__` (or None) and its one other method (see `_init_and_methods`)."""

    parts = _init_and_methods(cls)
    if parts is None or len(parts[1]) != 1:
        return None
    init, methods = parts
    return init, next(iter(methods.values()))


def _attributes(init: cst.FunctionDef | None, args: tuple[cst.Arg, ...] = ()) -> dict[str, cst.BaseExpression] | None:
    """`{name: expression}` of `self.name = expression` lines, the parameters bound (to `args`, by position or
    keyword, else their defaults) put in; None when the `__init__` does anything else or a parameter is left
    without a value. An argument other than a name or a literal (`Block(Config())`) is only put in where its
    parameter is read once: it is then still computed once."""

    if init is None:
        return None if args else {}
    params = init.params
    if params.star_arg is not cst.MaybeSentinel.DEFAULT or params.star_kwarg is not None or params.kwonly_params:
        return None
    if not params.params:
        return None
    self_name = params.params[0].name.value
    defaults = bound_arguments(args, list(params.params[1:]), [], init.body)
    if defaults is None:
        return None
    attributes: dict[str, cst.BaseExpression] = {}
    for line in init.body.body:
        if m.matches(line, SUPER_INIT) or m.matches(line, m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString())])):
            continue
        pattern = m.SimpleStatementLine(
            body=[m.Assign(targets=[m.AssignTarget(target=m.Attribute(value=m.Name(self_name), attr=m.Name()))])]
        )
        buffer = _registered_buffer(line, self_name)
        if buffer is not None:
            name, value = buffer
        elif m.matches(line, pattern):
            assign = line.body[0]  # type: ignore[union-attr]
            name, value = assign.targets[0].target.attr.value, assign.value
        else:
            return None
        if m.findall(value, m.Lambda() | m.GeneratorExp() | m.ListComp()):
            return None  # binds names of its own that a substitution could capture
        value = _read_earlier_aliases(value, self_name, attributes)
        if value is None:
            return None  # reads the instance otherwise
        value = bind_names(value, defaults)
        if value is None:
            return None
        if name in attributes:
            return None
        attributes[name] = value
    return attributes


def _registered_buffer(line: cst.CSTNode, self_name: str) -> tuple[str, cst.BaseExpression] | None:
    """``(name, value)`` of ``self.register_buffer("name", value)`` (a buffer is read as ``self.name``)."""

    pattern = m.SimpleStatementLine(
        body=[m.Expr(value=m.Call(func=m.Attribute(value=m.Name(self_name), attr=m.Name("register_buffer"))))]
    )
    if not m.matches(line, pattern):
        return None
    args = line.body[0].value.args  # type: ignore[attr-defined]
    if len(args) < 2 or any(arg.keyword is not None or arg.star for arg in args[:2]):
        return None
    if not isinstance(args[0].value, cst.SimpleString) or any(a.keyword is None for a in args[2:]):
        return None
    return args[0].value.evaluated_value, args[1].value  # type: ignore[return-value]


def _read_earlier_aliases(
    value: cst.BaseExpression, self_name: str, attributes: dict[str, cst.BaseExpression]
) -> cst.BaseExpression | None:
    """``value`` with ``self.NAME`` of an attribute assigned a plain name earlier read as that name
    (``torch.compile(self.probe)`` after ``self.probe = probe``); None if it reads the instance otherwise than
    through attributes assigned earlier."""

    earlier = [
        attribute
        for attribute in m.findall(value, m.Attribute(value=m.Name(self_name), attr=m.Name()))
        if attribute.attr.value in attributes  # type: ignore[union-attr]
    ]
    if len(earlier) != len(m.findall(value, m.Name(self_name))):
        return None
    # Reads of other attributes stay `self.NAME` until the variables are named (see `_variables_for`).
    reads = {a: attributes[a.attr.value] for a in earlier if isinstance(attributes[a.attr.value], cst.Name)}  # type: ignore[union-attr]
    return swap_nodes(value, reads) if reads else value


def _self_reads(method: cst.FunctionDef, self_name: str) -> dict[cst.Attribute, str] | None:
    """Each `self.NAME` read in the method with its name; None when `self` is used otherwise (stored into,
    passed on, a method of the instance called) or rebound."""

    reads: dict[cst.Attribute, str] = {}
    self_nodes = m.findall(method.body, m.Name(self_name))
    for attribute in m.findall(method.body, m.Attribute(value=m.Name(self_name), attr=m.Name())):
        reads[attribute] = attribute.attr.value  # type: ignore[union-attr]
    if len(self_nodes) != len(reads):
        return None
    return None if _stored_targets(method.body) & set(reads) else reads


def _construction(module: cst.Module, use: cst.CSTNode, method: str) -> tuple[cst.Call, cst.CSTNode] | None:
    """The `Cls()` call of the one use and the node to replace by the function: the call itself for a called
    class, `Cls().method` otherwise."""

    calls = [call for call in find_all(module, m.Call()) if call.func is use]  # type: ignore[union-attr]
    if len(calls) != 1 or calls[0].args:
        return None
    call = calls[0]
    if method in _CALLED:
        owners = [a for a in find_all(module, m.Attribute()) if a.value is call]  # type: ignore[union-attr]
        return None if owners else (call, call)
    owners = [a for a in find_all(module, m.Attribute(attr=m.Name(method))) if a.value is call]  # type: ignore[union-attr]
    return (call, owners[0]) if len(owners) == 1 else None


def _top_level_statement(module: cst.Module, node: cst.CSTNode) -> cst.CSTNode | None:
    for statement in module.body:
        if any(found is node for found in m.findall(statement, m.Call())):
            return statement
    return None


class _NameCollector(cst.CSTVisitor):
    """Every identifier the module uses as a variable (not the `attr` of `a.attr`, not a keyword name)."""

    def __init__(self) -> None:
        self.names: set[str] = set()

    def visit_Name(self, node: cst.Name) -> None:
        self.names.add(node.value)

    def visit_Attribute(self, node: cst.Attribute) -> bool:
        walk(node.value, self)
        return False

    def visit_Arg(self, node: cst.Arg) -> bool:
        walk(node.value, self)
        return False


def _names_in_use(node: cst.CSTNode) -> set[str]:
    collector = _NameCollector()
    walk(node, collector)
    return collector.names


def _bound_conversions(module: cst.Module) -> Iterator[cst.Module | None]:
    wrapper = metadata(module)
    scopes, parents = wrapper.resolve(ScopeProvider), parent_map(wrapper.module)
    global_scope = scopes[module]
    stored = _stored_targets(module)
    for cls, uses, _ in top_level_classes(module):
        methods = _init_and_methods(cls)
        if methods is None or len(uses) != 1:
            continue
        init, members = methods
        statement = _binding_statement(module, uses[0])
        if statement is None:
            continue
        assign = statement.body[0]
        variable = assign.targets[0].target.value
        attributes = _attributes(init, assign.value.args)
        if not attributes or len(global_scope[variable]) != 1:
            continue
        names = {name: (snake_case(cls.name.value) if name in _CALLED else name) for name in members}
        called = [names[name] for name in members if name in _CALLED]
        outside = set().union(*(_names_in_use(item) for item in module.body if item is not cls)) - {variable}
        named = _variables_for(attributes, outside | set(names.values()), list(members.values()), variable, _self_name(init))
        if named is None:
            continue
        aliases, attributes = named
        reads_as = aliases | names
        replacements: dict[cst.CSTNode, cst.CSTNode] = {}
        for access in (a.node for assignment in global_scope[variable] for a in assignment.references):
            parent = parents.get(access)
            if parent in stored:
                break  # `bank.features = ...`: the instance is state the script changes
            if isinstance(parent, cst.Attribute) and parent.value is access and parent.attr.value in reads_as:
                replacements[parent] = cst.Name(reads_as[parent.attr.value])
            elif called and not isinstance(parent, cst.Attribute):
                replacements[access] = cst.Name(called[0])
            else:
                break
        else:
            functions = _as_functions(cls, members, reads_as)
            inside = set().union(*(_names_in_use(method.params) | _names_in_use(method.body) for method in members.values()))
            function_names = list(names.values())
            if functions is None or len(set(function_names)) != len(function_names) or set(function_names) & (outside | inside | set(attributes)):
                continue
            assignments = _assignments(attributes, statement.leading_lines) if attributes else []
            yield lambda: _rebuild_bound(module, cls, functions, statement, assignments, replacements)


def _init_and_methods(cls: cst.ClassDef) -> tuple[cst.FunctionDef | None, dict[str, cst.FunctionDef]] | None:
    """The class's `__init__` (or None) and its other methods by name; None for a body with anything else
    (class attributes, decorators, keyword bases; a docstring is fine) or a method that takes `*args` or
    `**kwargs` or no `self`."""

    if cls.decorators or any(arg.keyword is not None for arg in cls.bases):
        return None
    init, methods = None, {}
    for item in cls.body.body:
        if isinstance(item, cst.FunctionDef):
            params = item.params
            if item.decorators or not params.params or params.star_arg is not cst.MaybeSentinel.DEFAULT:
                return None
            if params.star_kwarg is not None:
                return None
            if item.name.value == "__init__":
                init = item
            else:
                methods[item.name.value] = item
        elif not m.matches(item, _DOCSTRING_OR_PASS):
            return None
    return (init, methods) if methods or init is not None else None


def _binding_statement(module: cst.Module, use: cst.CSTNode) -> cst.SimpleStatementLine | None:
    """The module-level `name = Cls(...)` whose call is the class's one use."""

    pattern = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())], value=m.Call())])
    for statement in module.body:
        if m.matches(statement, pattern) and statement.body[0].value.func is use:  # type: ignore[union-attr]
            return statement  # type: ignore[return-value]
    return None


def _as_functions(cls, members, reads_as) -> list[cst.FunctionDef] | None:
    functions = []
    for method in members.values():
        self_name = method.params.params[0].name.value
        reads = _self_reads(method, self_name)
        if reads is None or not set(reads.values()) <= set(reads_as):
            return None
        body = swap_nodes(method.body, {node: cst.Name(reads_as[name]) for node, name in reads.items()})
        functions.append(
            method.with_changes(
                name=cst.Name(reads_as[method.name.value]),
                params=method.params.with_changes(params=method.params.params[1:]),
                body=body,
                leading_lines=cls.leading_lines if not functions else (cst.EmptyLine(), cst.EmptyLine()),
            )
        )
    return functions


def _rebuild_bound(module, cls, functions, statement, assignments, replacements) -> cst.Module:
    body = []
    for item in module.body:
        if item is cls:
            body.extend(functions)
        elif item is statement:
            body.extend(assignments)
        else:
            body.append(swap_nodes(item, replacements))
    return module.with_changes(body=body)


def _stored_names(node: cst.CSTNode) -> set[str]:
    """The plain names assigned, augmented or deleted anywhere in `node` (also inside tuple targets)."""

    return set().union(*(target_names(target) for target in _stored_targets(node)))


def _stored_targets(node: cst.CSTNode) -> set[cst.CSTNode]:
    """The expressions assigned to, augmented or deleted anywhere in `node`."""

    targets = {t.target for t in m.findall(node, m.AssignTarget() | m.AugAssign() | m.AnnAssign())}  # type: ignore[union-attr]
    return targets | {t.target for t in m.findall(node, m.Del())}  # type: ignore[union-attr]
