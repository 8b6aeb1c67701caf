"""Static checks that turn a candidate down without running it, because it cannot show the bug.

A generic reducer runs every candidate; we know kinds that are certain to fail before reaching the compiler:
a candidate that reads a name nothing binds any more (it deleted a definition something still uses: a
``NameError``), one that calls a function of its own with arguments its signature cannot take (a
``TypeError``), one whose method reads ``self.name`` that nothing in its class sets any more (an
``AttributeError``), and, for oracles that compare eager and compiled calls, one that no longer calls
``torch.compile`` at all. Problems are judged against the script the reduction started from, so a script that
already has one (a name bound through ``exec`` or ``globals()``, say) is not held to more than it was.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import libcst as cst
from libcst.metadata import MetadataWrapper, ScopeProvider

from minimizer.metrics import code_tokens


def static_problems(module: cst.Module) -> frozenset[str]:
    """Unbound names the module reads, calls of its own functions and classes that cannot bind, and ``self``
    attributes its classes read but never set."""

    scopes = MetadataWrapper(module, unsafe_skip_copy=True).resolve(ScopeProvider)
    problems: set[str] = set()
    definitions: dict[cst.Name, cst.CSTNode] = {}
    for scope in {scope for scope in scopes.values() if scope is not None}:
        for access in scope.accesses:
            if not isinstance(access.node, cst.Name):
                continue
            if not access.referents:
                problems.add(f"reads unbound name {access.node.value!r}")
            elif len(access.referents) == 1:
                definition = getattr(next(iter(access.referents)), "node", None)  # builtins have none
                if definition is not None:
                    definitions[access.node] = definition
    facts = _Facts()
    module.visit(facts)
    for call in facts.calls:
        callee = _callee(call)
        if callee in definitions:
            signature = _signature_of(definitions[callee])
            if signature is not None and not signature.binds(call):
                problems.add(f"calls {callee.value}() with arguments it cannot take")
    for name, attributes in facts.unset_attributes().items():
        problems.update(f"{name} reads self.{attribute}, which it never sets" for attribute in attributes)
    return frozenset(problems)


class _Facts(cst.CSTVisitor):
    """One walk over the module: every call, and per class the ``self`` attributes its methods read and set
    and the names its body defines."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[cst.Call] = []
        self._classes: list[str] = []
        self._read: dict[str, set[str]] = {}
        self._set: dict[str, set[str]] = {}

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self._classes.append(node.name.value)
        self._read.setdefault(node.name.value, set())
        # What the class body itself defines (methods, class attributes) is readable through ``self``.
        self._set.setdefault(node.name.value, set()).update(_names_bound_by(node.body.body))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self._classes.pop()

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self._classes and _is_self(node.value):
            self._read[self._classes[-1]].add(node.attr.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._record_set(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._record_set(node.target)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._record_set(node.target)

    def _record_set(self, target: cst.BaseExpression) -> None:
        if not self._classes:
            return
        if isinstance(target, cst.Attribute) and _is_self(target.value):
            self._set[self._classes[-1]].add(target.attr.value)
        elif isinstance(target, (cst.Tuple, cst.List)):
            for element in target.elements:
                self._record_set(element.value)

    def unset_attributes(self) -> dict[str, set[str]]:
        """Per class, the ``self`` attributes read but never set (inherited ones are in the start's problems
        already, so they are not held against a candidate)."""

        return {name: read - self._set[name] for name, read in self._read.items() if read - self._set[name]}


def _is_self(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "self"


def _names_bound_by(body: Sequence[cst.BaseStatement]) -> set[str]:
    names: set[str] = set()
    for statement in body:
        if isinstance(statement, (cst.FunctionDef, cst.ClassDef)):
            names.add(statement.name.value)
        elif isinstance(statement, cst.SimpleStatementLine):
            for small in statement.body:
                targets = [t.target for t in small.targets] if isinstance(small, cst.Assign) else []
                if isinstance(small, cst.AnnAssign):
                    targets = [small.target]
                names.update(t.value for t in targets if isinstance(t, cst.Name))
    return names


@dataclass(frozen=True)
class _Signature:
    positional: tuple[str, ...]  # parameters that can be passed by position, in order
    required: frozenset[str]  # parameters without a default
    keyword_only: frozenset[str]
    star_args: bool
    star_kwargs: bool

    def binds(self, call: cst.Call) -> bool:
        if any(arg.star for arg in call.args):
            return True  # *xs or **kw: the count is not known statically
        positional = [arg for arg in call.args if arg.keyword is None]
        keywords = {arg.keyword.value for arg in call.args if arg.keyword is not None}
        if len(positional) > len(self.positional) and not self.star_args:
            return False
        bound = set(self.positional[: len(positional)])
        if keywords & bound:
            return False  # the same parameter twice
        unknown = keywords - set(self.positional) - self.keyword_only
        if unknown and not self.star_kwargs:
            return False
        return self.required <= bound | keywords


def _signature_of(definition: cst.CSTNode) -> _Signature | None:
    """How a function can be called; for a class, its ``__init__`` less ``self``. ``None`` when unknown
    (decorated, or a class with bases or without its own ``__init__``: what it accepts is decided elsewhere)."""

    skip = 0
    if isinstance(definition, cst.ClassDef):
        if definition.bases or definition.keywords or definition.decorators:
            return None
        inits = [s for s in definition.body.body if isinstance(s, cst.FunctionDef) and s.name.value == "__init__"]
        if len(inits) != 1:
            return None
        definition, skip = inits[0], 1
    if not isinstance(definition, cst.FunctionDef) or definition.decorators:
        return None
    params = definition.params
    positional = [*params.posonly_params, *params.params][skip:]
    every = [*positional, *params.kwonly_params]
    return _Signature(
        positional=tuple(p.name.value for p in positional),
        required=frozenset(p.name.value for p in every if p.default is None),
        keyword_only=frozenset(p.name.value for p in params.kwonly_params),
        star_args=isinstance(params.star_arg, cst.Param),
        star_kwargs=params.star_kwarg is not None,
    )


def _callee(call: cst.Call) -> cst.Name | None:
    """The name called: ``f`` in ``f(x)`` and in ``torch.compile(f)(x)`` (compiling keeps the signature)."""

    func = call.func
    if isinstance(func, cst.Call) and func.args and not func.args[0].keyword and not func.args[0].star:
        compiler = func.func.attr if isinstance(func.func, cst.Attribute) else func.func
        if isinstance(compiler, cst.Name) and compiler.value == "compile":
            func = func.args[0].value
    return func if isinstance(func, cst.Name) else None


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
            known_problems=static_problems(cst.parse_module(start)),
            must_call_compile=oracle_compares_compiled_calls and calls_compile(start),
        )

    def why_not(self, text: str) -> str | None:
        """Why ``text`` cannot show the bug, or ``None`` when it has to be run to tell."""

        if self.must_call_compile and not calls_compile(text):
            return "no longer calls torch.compile"
        try:
            new = static_problems(cst.parse_module(text)) - self.known_problems
        except cst.ParserSyntaxError:
            return "does not parse"
        return min(new) if new else None
