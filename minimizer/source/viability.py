"""Static checks that turn a candidate down without running it, because it cannot show the bug.

A generic reducer runs every candidate; we know kinds that are certain to fail before reaching the compiler:
a candidate that reads a name nothing binds any more (it deleted a definition something still uses: a
``NameError``), one that calls a function of its own with arguments its signature cannot take (a
``TypeError``), one whose method reads ``self.name`` that nothing in its class sets any more (an
``AttributeError``), and, for oracles that compare eager and compiled calls, one that no longer calls
``torch.compile`` at all. Problems are judged against the script the reduction started from, so a script that
already has one (a name bound through ``exec`` or ``globals()``, say) is not held to more than it was.

Every proposal passes through here, so it is built on the compiler's own ``ast`` and ``symtable`` (a few
milliseconds a script) rather than on a libcst scope analysis (about twenty times slower).
"""

from __future__ import annotations

import ast
import builtins
import symtable
from collections import Counter
from dataclasses import dataclass

from minimizer.metrics import code_tokens
from minimizer.syntax import parse_python

# What a module can read without binding it.
_ALWAYS_BOUND = frozenset(dir(builtins)) | {
    "__name__", "__file__", "__doc__", "__builtins__", "__spec__", "__loader__", "__package__", "__annotations__",
    "__cached__", "__path__",
}  # fmt: skip


def static_problems(text: str) -> frozenset[str]:
    """Unbound names the script reads, calls of its own functions and classes that cannot bind, and ``self``
    attributes its classes read but never set. Raises ``SyntaxError`` for a script that does not parse."""

    tree = parse_python(text)
    table = symtable.symtable(text, "<candidate>", "exec")
    problems = _unbound_reads(tree, table) | _locals_read_before_assignment(tree)
    problems.update(_calls_that_cannot_bind(tree))
    problems.update(_unset_self_attributes(tree))
    return frozenset(problems)


# -- unbound names ---------------------------------------------------------------------------------------------


def _unbound_reads(tree: ast.Module, top: symtable.SymbolTable) -> set[str]:
    if any(isinstance(n, ast.ImportFrom) and any(a.name == "*" for a in n.names) for n in ast.walk(tree)):
        return set()  # a star import binds names nobody can list here
    module_names = {s.get_name() for s in top.get_symbols() if _binds(s)}
    tables = list(_all_tables(top))
    # ``global x`` followed by an assignment in a function binds x at module level too.
    module_names |= {s.get_name() for t in tables for s in t.get_symbols() if s.is_declared_global() and s.is_assigned()}
    problems = set()
    for table in tables:
        for symbol in table.get_symbols():
            if not symbol.is_referenced():
                continue
            name = symbol.get_name()
            at_module_level = table is top or symbol.is_global()
            bound_here = table is not top and (symbol.is_local() or symbol.is_free())
            if at_module_level and not bound_here and name not in module_names and name not in _ALWAYS_BOUND:
                problems.add(f"reads unbound name {name!r}")
    return problems


_NESTED_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _locals_read_before_assignment(tree: ast.Module) -> set[str]:
    """Local names a function reads before any statement of it binds them (``h = f(h)`` once the line that
    first set ``h`` is gone: an ``UnboundLocalError``). Only functions without loops are judged, where the
    order of the text is the order things can happen; names a nested scope also uses are left alone."""

    problems = set()
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        own = list(_own_scope(function))
        if any(isinstance(node, (ast.For, ast.AsyncFor, ast.While)) for node in own):
            continue
        parameters = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
        declared = {name for node in own if isinstance(node, (ast.Global, ast.Nonlocal)) for name in node.names}
        nested_uses = {
            node.id for scope in own if isinstance(scope, _NESTED_SCOPES) for node in ast.walk(scope)
            if isinstance(node, ast.Name)
        }  # fmt: skip
        # An assignment binds its targets once its value is computed, at the end of the statement; other
        # bindings (``with ... as f``, ``except E as e``) take effect where they stand.
        assigned_at = {
            id(name): (statement.end_lineno, statement.end_col_offset)
            for statement in own if isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Import,
                                                           ast.ImportFrom))
            for name in ast.walk(statement) if isinstance(name, (ast.Name, ast.alias))
        }  # fmt: skip
        first_read: dict[str, tuple[int, int]] = {}
        first_bound: dict[str, tuple[int, int]] = {}
        for node in own:
            if isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
                _earliest(first_read, node.target.id, (node.lineno, node.col_offset))
            if isinstance(node, ast.Name):
                if isinstance(node.ctx, ast.Load):
                    _earliest(first_read, node.id, (node.lineno, node.col_offset))
                else:
                    _earliest(first_bound, node.id, assigned_at.get(id(node), (node.lineno, node.col_offset)))
            elif isinstance(node, ast.NamedExpr):
                _earliest(first_bound, node.target.id, (node.end_lineno, node.end_col_offset))
            elif isinstance(node, _NESTED_SCOPES) and node is not function and not isinstance(node, ast.Lambda):
                _earliest(first_bound, node.name, (node.end_lineno, node.end_col_offset))
            elif isinstance(node, ast.alias):
                _earliest(first_bound, (node.asname or node.name).split(".")[0], assigned_at[id(node)])
            elif isinstance(node, ast.ExceptHandler) and node.name:
                _earliest(first_bound, node.name, (node.lineno, node.col_offset))
        for name, bound_at in first_bound.items():
            if name in parameters or name in declared or name in nested_uses:
                continue
            if name in first_read and first_read[name] < bound_at:
                problems.add(f"reads unbound name {name!r}")
    return problems


def _own_scope(function: ast.FunctionDef | ast.AsyncFunctionDef):
    """The nodes of the function's body in the order of the text, without what nested functions, classes and
    comprehensions hold (a nested scope itself is yielded, its inside is not)."""

    def walk(node: ast.AST):
        for child in ast.iter_child_nodes(node):
            yield child
            if not isinstance(child, (*_NESTED_SCOPES, *_COMPREHENSIONS)):
                yield from walk(child)

    for statement in function.body:
        yield statement
        yield from walk(statement)


def _earliest(positions: dict[str, tuple[int, int]], name: str, position: tuple[int, int]) -> None:
    if name not in positions or position < positions[name]:
        positions[name] = position


def _binds(symbol: symtable.Symbol) -> bool:
    return symbol.is_assigned() or symbol.is_imported() or symbol.is_namespace() or symbol.is_parameter()


def _all_tables(table: symtable.SymbolTable):
    yield table
    for child in table.get_children():
        yield from _all_tables(child)


# -- calls of the script's own functions and classes --------------------------------------------------------


@dataclass(frozen=True)
class _Signature:
    positional: tuple[str, ...]  # parameters that can be passed by position, in order
    required: frozenset[str]  # parameters without a default
    keyword_only: frozenset[str]
    star_args: bool
    star_kwargs: bool

    def binds(self, call: ast.Call) -> bool:
        if any(isinstance(arg, ast.Starred) for arg in call.args) or any(kw.arg is None for kw in call.keywords):
            return True  # *xs or **kw: the count is not known statically
        keywords = {kw.arg for kw in call.keywords}
        if len(call.args) > len(self.positional) and not self.star_args:
            return False
        bound = set(self.positional[: len(call.args)])
        if keywords & bound:
            return False  # the same parameter twice
        unknown = keywords - set(self.positional) - self.keyword_only
        if unknown and not self.star_kwargs:
            return False
        return self.required <= bound | keywords


def _calls_that_cannot_bind(tree: ast.Module) -> set[str]:
    # Only names bound exactly once in the whole script, by a top-level def or class: every read of such a
    # name, in any scope, is that definition.
    bindings = _binding_counts(tree)
    signatures = {
        statement.name: signature
        for statement in tree.body
        if isinstance(statement, (ast.FunctionDef, ast.ClassDef))
        and bindings[statement.name] == 1
        and (signature := _signature_of(statement)) is not None
    }
    problems = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and (callee := _callee(node)) in signatures:
            if not signatures[callee].binds(node):
                problems.add(f"calls {callee}() with arguments it cannot take")
    return problems


def _binding_counts(tree: ast.Module) -> Counter:
    counts: Counter = Counter()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] += 1
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] += 1
        elif isinstance(node, ast.arg):
            counts[node.arg] += 1
        elif isinstance(node, ast.alias):
            counts[(node.asname or node.name).split(".")[0]] += 1
        elif isinstance(node, ast.ExceptHandler) and node.name:
            counts[node.name] += 1
        elif isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name:
            counts[node.name] += 1
        elif isinstance(node, ast.MatchMapping) and node.rest:
            counts[node.rest] += 1
    return counts


def _signature_of(definition: ast.FunctionDef | ast.ClassDef) -> _Signature | None:
    """How a function can be called; for a class, its ``__init__`` less ``self``. ``None`` when unknown
    (decorated, or a class with bases or without its own ``__init__``: what it accepts is decided elsewhere)."""

    skip = 0
    if isinstance(definition, ast.ClassDef):
        if definition.bases or definition.keywords or definition.decorator_list:
            return None
        inits = [s for s in definition.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"]
        if len(inits) != 1:
            return None
        definition, skip = inits[0], 1
    if definition.decorator_list:
        return None
    args = definition.args
    every_positional = [*args.posonlyargs, *args.args]
    defaulted = {a.arg for a in every_positional[len(every_positional) - len(args.defaults) :]} if args.defaults else set()
    positional = every_positional[skip:]
    return _Signature(
        positional=tuple(a.arg for a in positional),
        required=frozenset(
            [a.arg for a in positional if a.arg not in defaulted]
            + [a.arg for a, default in zip(args.kwonlyargs, args.kw_defaults) if default is None]
        ),
        keyword_only=frozenset(a.arg for a in args.kwonlyargs),
        star_args=args.vararg is not None,
        star_kwargs=args.kwarg is not None,
    )


def _callee(call: ast.Call) -> str | None:
    """The name called: ``f`` in ``f(x)`` and in ``torch.compile(f)(x)`` (compiling keeps the signature)."""

    func = call.func
    if isinstance(func, ast.Call) and func.args and not isinstance(func.args[0], ast.Starred):
        compiler = func.func.attr if isinstance(func.func, ast.Attribute) else getattr(func.func, "id", None)
        if compiler == "compile":
            func = func.args[0]
    return func.id if isinstance(func, ast.Name) else None


# -- self attributes --------------------------------------------------------------------------------------------


def _unset_self_attributes(tree: ast.Module) -> set[str]:
    """Per class, the ``self`` attributes its methods read but nothing in it sets (inherited ones are in the
    start's problems already, so they are not held against a candidate)."""

    read: dict[str, set[str]] = {}
    written: dict[str, set[str]] = {}

    def walk(node: ast.AST, owner: str | None) -> None:
        if isinstance(node, ast.ClassDef):
            owner = node.name
            read.setdefault(owner, set())
            # What the class body itself defines (methods, class attributes) is readable through ``self``.
            written.setdefault(owner, set()).update(_names_bound_by(node.body))
        elif owner is not None and isinstance(node, ast.Attribute) and _is_self(node.value):
            (read if isinstance(node.ctx, ast.Load) else written)[owner].add(node.attr)
        for child in ast.iter_child_nodes(node):
            walk(child, owner)

    walk(tree, None)
    return {
        f"{owner} reads self.{attribute}, which it never sets"
        for owner, attributes in read.items()
        for attribute in attributes - written[owner]
    }


def _is_self(node: ast.expr) -> bool:
    return isinstance(node, ast.Name) and node.id == "self"


def _names_bound_by(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(statement.name)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign)):
            targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
    return names


# -- the screen -----------------------------------------------------------------------------------------------


def calls_compile(text: str) -> bool:
    """Whether the script's code (not its comments or strings) still names ``compile``."""

    return "compile" in code_tokens(text)


@dataclass(frozen=True)
class Viability:
    """What every candidate must keep of the script the reduction started from."""

    known_problems: frozenset[str]
    must_call_compile: bool

    @classmethod
    def of(cls, start: str, *, oracle_compares_compiled_calls: bool) -> Viability:
        return cls(
            known_problems=static_problems(start),
            must_call_compile=oracle_compares_compiled_calls and calls_compile(start),
        )

    def why_not(self, text: str) -> str | None:
        """Why ``text`` cannot show the bug, or ``None`` when it has to be run to tell."""

        if self.must_call_compile and not calls_compile(text):
            return "no longer calls torch.compile"
        try:
            new = static_problems(text) - self.known_problems
        except (SyntaxError, ValueError):  # ValueError: null bytes
            return "does not parse"
        return min(new) if new else None
