"""Which removable definitions a module's live code reads: the def-use graph behind dead-code removal.

Computed on CPython's own `ast` (a C parser) rather than libcst's scope metadata: the reducer asks this of every
candidate it takes or speculates on (what did the step leave unread?), and libcst's scope analysis alone cost
more than the rest of proposing a step. The definitions found are then matched to the libcst module's nodes,
which the passes edit: both trees list the same statements in the same source order.

The graph's nodes are *definitions* (a `def`/`class` statement, one imported name, a name-only assignment
statement, a `self.NAME = ...` statement in an `__init__`) plus ROOT, which stands for every statement that
defines nothing (the script's actual work). Each read of a name or attribute is charged to the innermost
definition around it, or to ROOT, and adds an edge from there to the definitions it may read: every binding of
that name in the scope the read resolves to (no flow analysis), every `self.NAME = ...` for an attribute.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Iterator

import libcst as cst
import networkx as nx

from minimizer.source.rendering import render
from minimizer.syntax import parse_python

ROOT = "<live statements>"
_DUNDER = re.compile(r"^__\w+__$")


@dataclass
class DefUseGraph:
    """``graph``: edges from a reader (a definition, or ROOT) to the definitions it may read; nodes are the
    libcst module's own definition nodes. ``position``: each definition's rank in source order."""

    graph: nx.DiGraph
    position: dict[cst.CSTNode, int]


def def_use_graph(module: cst.Module) -> DefUseGraph:
    """The def-use graph of ``module`` (see the module docstring). A module whose statements cannot be matched
    between the two trees gets a graph where every definition is read (nothing is ever found dead)."""

    tree = parse_python(render(module))  # (not ast.parse: one thread at a time, see minimizer.syntax)
    graph = nx.DiGraph()
    graph.add_node(ROOT)
    statements = _matched_statements(tree, module)
    if statements is None:
        return DefUseGraph(graph, {})  # the trees disagree: claim nothing is dead
    analysis = _Analysis()
    analysis.visit(tree)
    to_cst: dict[ast.AST, cst.CSTNode] = {}
    for unit in analysis.units:
        node = _cst_node(unit, statements, analysis.alias_owner)
        if node is None:
            return DefUseGraph(graph, {})
        to_cst[unit] = node
        graph.add_node(node)
    for reader, unit in analysis.edges:
        graph.add_edge(ROOT if reader is None else to_cst[reader], to_cst[unit])
    return DefUseGraph(graph, {to_cst[unit]: rank for rank, unit in enumerate(analysis.units)})


# --- scopes and reads ----------------------------------------------------------------------------------------


@dataclass(eq=False)
class _Scope:
    kind: str  # "module", "function", "class" or "comprehension"
    parent: _Scope | None
    bound: dict[str, int] = field(default_factory=dict)  # every name bound here -> rank of its first binding
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    units: dict[str, list[ast.AST]] = field(default_factory=dict)  # removable definitions, by the name bound

    def bind(self, name: str, rank: int) -> None:
        self.bound[name] = min(rank, self.bound.get(name, rank))

    def resolve(self, name: str) -> _Scope | None:
        """The scope a read of ``name`` here finds its bindings in (None: nowhere in the module, a builtin)."""

        scope: _Scope | None = self
        while scope is not None:
            if name in scope.declared_global:
                return self.module()
            if name in scope.bound and name not in scope.declared_nonlocal:
                return scope
            scope = scope.parent
            while scope is not None and scope.kind == "class":  # functions do not see their class's names
                scope = scope.parent
        return None

    def module(self) -> _Scope:
        scope = self
        while scope.parent is not None:
            scope = scope.parent
        return scope


class _Analysis:
    """Two walks over the tree: the first binds names to scopes and collects the definitions, the second
    resolves every read (bindings can come after the reads that resolve to them)."""

    def __init__(self) -> None:
        self.units: list[ast.AST] = []  # in source order
        self.edges: list[tuple[ast.AST | None, ast.AST]] = []
        self._scope_of: dict[ast.AST, _Scope] = {}  # a scope-making node -> the scope of its body
        self._reads: list[tuple[_Scope, ast.AST | None, str, int]] = []  # scope, owner, name, statement rank
        self._rank: dict[ast.AST, int] = {}  # statements (and import aliases), in source order
        self._at = 0  # the rank of the statement the first walk is in
        self._attribute_reads: list[tuple[ast.AST | None, str]] = []
        self._self_attributes: dict[str, list[ast.AST]] = {}
        self._exported: set[str] = set()
        self._annotations: set[ast.AST] = set()  # annotations, whose strings name what they read
        self._scopes: list[_Scope] = []
        self._defining: set[ast.AST] = set()  # the units, once the first walk has found them all
        self.alias_owner: dict[ast.alias, tuple[ast.stmt, int]] = {}

    def visit(self, tree: ast.Module) -> None:
        module = _Scope("module", None)
        self._scopes.append(module)
        self._rank = {statement: rank for rank, statement in enumerate(_ast_statements(tree.body))}
        self._bind_block(tree.body, module, in_init=False)
        self._defining = set(self.units)
        self._read_block(tree.body, module, owner=None)
        for scope, owner, name, rank in self._reads:
            for unit in self._bindings_read(scope, name, rank):
                self.edges.append((owner, unit))
        for owner, attribute in self._attribute_reads:
            for unit in self._self_attributes.get(attribute, ()):
                self.edges.append((owner, unit))
        for scope in self._scopes:
            for name, units in scope.units.items():
                if _DUNDER.match(name) or (scope is module and name in self._exported):
                    self.edges.extend((None, unit) for unit in units)

    def _bindings_read(self, scope: _Scope, name: str, rank: int) -> list[ast.AST]:
        """The definitions a read of ``name`` at statement ``rank`` in ``scope`` may read. In its own scope, only
        those made by earlier statements (a last `x = ...` that nothing reads after is dead), unless there are
        none (a read in a loop may see a later one); from an inner scope, all of them (called any time)."""

        target = scope.resolve(name)
        units = target.units.get(name, []) if target is not None else []
        if target is not scope:
            return units
        earlier = [unit for unit in units if self._rank[unit] < rank]
        if earlier or target.bound.get(name, rank) < rank:  # (a parameter, a loop variable: bound, not removable)
            return earlier
        return units

    # First walk: bindings and definitions. -------------------------------------------------------------------

    def _bind_block(self, body: list[ast.stmt], scope: _Scope, *, in_init: bool) -> None:
        for statement in body:
            self._bind_statement(statement, scope, in_init=in_init)

    def _bind_statement(self, statement: ast.stmt, scope: _Scope, *, in_init: bool) -> None:
        self._at = self._rank[statement]
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self._bind(scope, statement.name, statement)
            self._bind_expressions(self._evaluated_outside(statement), scope)
            kind = "class" if isinstance(statement, ast.ClassDef) else "function"
            inner = self._new_scope(statement, kind, scope)
            if kind == "function":
                for parameter in _parameters(statement.args):
                    inner.bind(parameter.arg, self._at)
            self._bind_block(statement.body, inner, in_init=kind == "function" and statement.name == "__init__")
            return
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            future = isinstance(statement, ast.ImportFrom) and statement.module == "__future__"
            for index, alias in enumerate(statement.names):
                if alias.name == "*":
                    continue
                self.alias_owner[alias] = (statement, index)
                self._rank[alias] = self._rank[statement]
                name = alias.asname or alias.name.split(".")[0]
                self._bind(scope, name, alias if not future else None)
            return
        if isinstance(statement, ast.Global):
            scope.declared_global.update(statement.names)
        elif isinstance(statement, ast.Nonlocal):
            scope.declared_nonlocal.update(statement.names)
        elif isinstance(statement, ast.Assign):
            if _all_names(statement.targets):
                names = [n.id for target in statement.targets for n in _target_names(target)]
                for name in names:
                    self._bind(scope, name, statement)
            elif in_init and all(_is_self_attribute(target) for target in statement.targets):
                self._unit(statement)
                for target in statement.targets:
                    self._self_attributes.setdefault(target.attr, []).append(statement)
            if _is_exports(statement, scope):
                self._exported.update(_strings(statement.value))
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)) and isinstance(statement.target, ast.Name):
            self._bind(scope, statement.target.id, statement)
        # Everything else binds through its targets (for, with, except, walrus, match, del, ...), never as a
        # removable definition; and its nested blocks belong to the same scope.
        self._bind_expressions(self._own_expressions(statement), scope)
        for block in _blocks(statement):
            self._bind_block(block, scope, in_init=in_init)

    def _bind_expressions(self, expressions: Iterator[ast.AST], scope: _Scope) -> None:
        for expression in expressions:
            self._bind_expression(expression, scope)

    def _bind_expression(self, node: ast.AST, scope: _Scope) -> None:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            scope.bind(node.id, self._at)
        elif isinstance(node, ast.NamedExpr):
            target_scope = scope
            while target_scope.kind == "comprehension":
                target_scope = target_scope.parent  # type: ignore[assignment]
            target_scope.bind(node.target.id, self._at)
            self._bind_expression(node.value, scope)
            return
        elif isinstance(node, ast.Lambda):
            self._bind_expressions(_defaults(node.args), scope)
            inner = self._new_scope(node, "function", scope)
            for parameter in _parameters(node.args):
                inner.bind(parameter.arg, self._at)
            self._bind_expression(node.body, inner)
            return
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            self._bind_expression(node.generators[0].iter, scope)  # evaluated where the comprehension stands
            inner = self._new_scope(node, "comprehension", scope)
            for child in _comprehension_parts(node):
                self._bind_expression(child, inner)
            return
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            scope.bind(node.name, self._at)
        elif isinstance(node, ast.MatchMapping) and node.rest:
            scope.bind(node.rest, self._at)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            scope.bind(node.name, self._at)
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                self._bind_expression(child, scope)

    def _new_scope(self, node: ast.AST, kind: str, parent: _Scope) -> _Scope:
        scope = _Scope(kind, parent)
        self._scope_of[node] = scope
        self._scopes.append(scope)
        return scope

    def _bind(self, scope: _Scope, name: str, unit: ast.AST | None) -> None:
        target = scope.module() if name in scope.declared_global else scope
        target.bind(name, self._at)
        if unit is not None and scope.kind != "class":  # class attributes are read as attributes: untracked
            self._unit(unit)
            target.units.setdefault(name, []).append(unit)

    def _unit(self, unit: ast.AST) -> None:
        if not self.units or self.units[-1] is not unit:
            self.units.append(unit)

    # Second walk: reads, charged to the innermost definition around them. ----------------------------------

    def _read_block(self, body: list[ast.stmt], scope: _Scope, owner: ast.AST | None) -> None:
        for statement in body:
            self._read_statement(statement, scope, owner)

    def _read_statement(self, statement: ast.stmt, scope: _Scope, owner: ast.AST | None) -> None:
        if isinstance(statement, (ast.Import, ast.ImportFrom)):
            return
        owner = statement if statement in self._defining else owner
        rank = self._rank[statement]
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            for expression in self._evaluated_outside(statement):
                self._read(expression, scope, owner, rank)
            self._read_block(statement.body, self._scope_of[statement], owner)
            return
        if isinstance(statement, ast.AugAssign):
            self._read_target(statement.target, scope, owner, rank)  # `x += 1` reads x as well
        for expression in self._own_expressions(statement):
            self._read(expression, scope, owner, rank)
        for block in _blocks(statement):
            self._read_block(block, scope, owner)

    def _read_target(self, target: ast.AST, scope: _Scope, owner: ast.AST | None, rank: int) -> None:
        if isinstance(target, ast.Name):
            self._reads.append((scope, owner, target.id, rank))
        elif isinstance(target, ast.Attribute):
            self._attribute_reads.append((owner, target.attr))

    def _read(self, node: ast.AST, scope: _Scope, owner: ast.AST | None, rank: int, annotation: bool = False) -> None:
        annotation = annotation or node in self._annotations
        if isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self._reads.append((scope, owner, node.id, rank))
            return
        if isinstance(node, ast.Attribute) and not isinstance(node.ctx, ast.Store):
            self._attribute_reads.append((owner, node.attr))
        elif isinstance(node, ast.Lambda):
            for default in _defaults(node.args):
                self._read(default, scope, owner, rank)
            self._read(node.body, self._scope_of[node], owner, rank)
            return
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            self._read(node.generators[0].iter, scope, owner, rank)
            for child in _comprehension_parts(node):
                self._read(child, self._scope_of[node], owner, rank)
            return
        elif annotation and isinstance(node, ast.Constant) and isinstance(node.value, str):
            self._read_string_annotation(node.value, scope, owner, rank)  # `x: "torch.Tensor"` reads torch
            return
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.stmt):
                self._read(child, scope, owner, rank, annotation)

    def _read_string_annotation(self, text: str, scope: _Scope, owner: ast.AST | None, rank: int) -> None:
        try:
            expression = parse_python(text.strip(), mode="eval")
        except SyntaxError:
            return
        self._read(expression.body, scope, owner, rank)

    # The parts of statements. ------------------------------------------------------------------------------

    def _own_expressions(self, statement: ast.stmt) -> Iterator[ast.AST]:
        """The parts of a (non-definition) statement outside its nested blocks: expressions, targets,
        handlers' types and names, match patterns."""

        for name, value in ast.iter_fields(statement):
            if name in ("body", "orelse", "finalbody", "handlers", "cases"):
                continue
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, ast.AST):
                    if name == "annotation":
                        self._annotations.add(item)
                    yield item
        for handler in getattr(statement, "handlers", ()):
            yield handler  # its type (read) and name (bound); its body is a block
        for case in getattr(statement, "cases", ()):
            yield case.pattern
            if case.guard is not None:
                yield case.guard

    def _evaluated_outside(self, definition: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> Iterator[ast.AST]:
        """What a `def`/`class` statement evaluates in the scope around it: decorators, defaults, annotations,
        base classes and keywords."""

        yield from definition.decorator_list
        if isinstance(definition, ast.ClassDef):
            yield from definition.bases
            yield from definition.keywords
            return
        yield from _defaults(definition.args)
        annotations = [p.annotation for p in _parameters(definition.args)] + [definition.returns]
        for annotation in (a for a in annotations if a is not None):
            self._annotations.add(annotation)
            yield annotation


# --- statements and their parts ------------------------------------------------------------------------------


def _blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    """The statement blocks nested in a statement, in source order (a function's or class's body too: callers
    that give it a scope of its own handle definitions before asking)."""

    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield statement.body
        return
    if isinstance(statement, ast.Match):
        for case in statement.cases:
            yield case.body
        return
    body = getattr(statement, "body", None)
    if isinstance(body, list):
        yield body
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    for name in ("orelse", "finalbody"):
        block = getattr(statement, name, None)
        if block:
            yield block


def _parameters(arguments: ast.arguments) -> list[ast.arg]:
    extra = [a for a in (arguments.vararg, arguments.kwarg) if a is not None]
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs, *extra]


def _defaults(arguments: ast.arguments) -> list[ast.expr]:
    return [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]


def _comprehension_parts(node: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> Iterator[ast.AST]:
    for index, generator in enumerate(node.generators):
        yield generator.target
        if index:
            yield generator.iter
        yield from generator.ifs
    if isinstance(node, ast.DictComp):
        yield node.key
        yield node.value
    else:
        yield node.elt


def _target_names(target: ast.AST) -> list[ast.Name]:
    if isinstance(target, ast.Name):
        return [target]
    if isinstance(target, ast.Starred):
        return _target_names(target.value)
    if isinstance(target, (ast.Tuple, ast.List)):
        return [name for element in target.elts for name in _target_names(element)]
    return []


def _all_names(targets: list[ast.expr]) -> bool:
    """Every target binds only plain names (`x`, `a, b`, `(a, [b, *c])`), no attribute or item."""

    def names_only(target: ast.AST) -> bool:
        if isinstance(target, ast.Name):
            return True
        if isinstance(target, ast.Starred):
            return names_only(target.value)
        return isinstance(target, (ast.Tuple, ast.List)) and all(names_only(e) for e in target.elts)

    return all(names_only(target) for target in targets)


def _is_self_attribute(target: ast.AST) -> bool:
    return isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self"


def _is_exports(statement: ast.Assign, scope: _Scope) -> bool:
    return scope.kind == "module" and any(isinstance(t, ast.Name) and t.id == "__all__" for t in statement.targets)


def _strings(node: ast.AST) -> set[str]:
    return {n.value for n in ast.walk(node) if isinstance(n, ast.Constant) and isinstance(n.value, str)}


# --- matching the two trees ----------------------------------------------------------------------------------


def _matched_statements(tree: ast.Module, module: cst.Module) -> dict[ast.stmt, cst.CSTNode] | None:
    """Each `ast` statement's libcst counterpart (a small statement, or a compound one), or None when the two
    trees do not list the same kinds of statement in the same order."""

    ours = list(_ast_statements(tree.body))
    theirs = list(_cst_statements(module.body))
    if len(ours) != len(theirs):
        return None
    for mine, their in zip(ours, theirs):
        if _CST_KIND.get(type(mine)) is not type(their):
            return None
    return dict(zip(ours, theirs))


def _ast_statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        yield statement
        for block in _blocks(statement):
            yield from _ast_statements(block)


def _cst_statements(body) -> Iterator[cst.CSTNode]:
    for statement in body:
        if isinstance(statement, cst.SimpleStatementLine):
            yield from statement.body
            continue
        yield statement
        yield from _cst_blocks(statement)


def _cst_blocks(statement: cst.CSTNode) -> Iterator[cst.CSTNode]:
    if isinstance(statement, cst.Match):
        for case in statement.cases:
            yield from _cst_suite(case.body)
        return
    yield from _cst_suite(statement.body)
    for handler in getattr(statement, "handlers", ()):
        yield from _cst_suite(handler.body)
    orelse = getattr(statement, "orelse", None)
    if isinstance(orelse, cst.If):  # elif: a statement of its own in the `else` block, as ast has it
        yield orelse
        yield from _cst_blocks(orelse)
    elif orelse is not None:
        yield from _cst_suite(orelse.body)
    final = getattr(statement, "finalbody", None)
    if final is not None:
        yield from _cst_suite(final.body)


def _cst_suite(suite) -> Iterator[cst.CSTNode]:
    if isinstance(suite, cst.SimpleStatementSuite):
        yield from suite.body
    else:
        yield from _cst_statements(suite.body)


def _cst_node(
    unit: ast.AST, statements: dict[ast.stmt, cst.CSTNode], alias_owner: dict[ast.alias, tuple[ast.stmt, int]]
) -> cst.CSTNode | None:
    if isinstance(unit, ast.alias):
        statement, index = alias_owner[unit]
        node = statements.get(statement)
        names = getattr(node, "names", None)
        return names[index] if isinstance(names, (list, tuple)) and index < len(names) else None
    return statements.get(unit)  # type: ignore[arg-type]


_CST_KIND: dict[type, type] = {
    ast.FunctionDef: cst.FunctionDef, ast.AsyncFunctionDef: cst.FunctionDef, ast.ClassDef: cst.ClassDef,
    ast.Return: cst.Return, ast.Delete: cst.Del, ast.Assign: cst.Assign, ast.AugAssign: cst.AugAssign,
    ast.AnnAssign: cst.AnnAssign, ast.For: cst.For, ast.AsyncFor: cst.For, ast.While: cst.While, ast.If: cst.If,
    ast.With: cst.With, ast.AsyncWith: cst.With, ast.Match: cst.Match, ast.Raise: cst.Raise, ast.Try: cst.Try,
    ast.TryStar: cst.TryStar, ast.Assert: cst.Assert, ast.Import: cst.Import, ast.ImportFrom: cst.ImportFrom,
    ast.Global: cst.Global, ast.Nonlocal: cst.Nonlocal, ast.Expr: cst.Expr, ast.Pass: cst.Pass,
    ast.Break: cst.Break, ast.Continue: cst.Continue,
}
