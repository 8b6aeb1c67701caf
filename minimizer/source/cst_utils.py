"""Small libcst helpers shared by the source passes: edit a module by node identity, measure it, filter candidates.

Every pass builds candidates the same way: find nodes in the current module, produce a new module with one of
them replaced or removed, and let `distinct_candidates` throw away what does not parse, repeats, or grows.
Nodes are matched by identity (`is`), so callers must pass nodes taken from the very module they edit.
"""

from __future__ import annotations

import collections
import functools
import threading
import tokenize
from typing import Callable, Iterable, Iterator, Mapping, Optional, TypeVar, Union

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst.metadata import GlobalScope, MetadataWrapper
import libcst.matchers as m

from minimizer.metrics import count_tokens
from minimizer.source.traversal import parent_map

NodeT = TypeVar("NodeT", bound=cst.CSTNode)

__all__ = [
    "code_of",
    "code_size",
    "compiles",
    "distinct_candidates",
    "settled",
    "remove_node",
    "remove_nodes",
    "replace_node",
    "replace_nodes",
    "RemovalRepairingTransformer",
    "substitute_expression",
    "try_build",
]

Replacement = Union[cst.CSTNode, cst.RemovalSentinel, cst.FlattenSentinel]


def code_size(module_or_code: cst.Module | str) -> int:
    """Count the Python tokens of a module or source string, ignoring comments and layout tokens
    (`minimizer.metrics.count_tokens`, the measure the report uses).

    Code that does not tokenize counts as infinitely large (`sys.maxsize`-like), so it never looks like progress.
    """
    code = render(module_or_code) if isinstance(module_or_code, cst.Module) else module_or_code
    try:
        return count_tokens(code)
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return 2**62


def compiles(code: str) -> bool:
    """Return True when `code` parses with libcst and byte-compiles with CPython.

    libcst accepts some programs CPython rejects (`return` at module level, a `break` outside a loop), and a
    candidate the interpreter rejects only wastes an oracle call.
    """
    return _parse_if_compiles(code) is not None


@functools.lru_cache(maxsize=64)
def metadata(module: cst.Module) -> MetadataWrapper:
    """The module's metadata wrapper, shared: every pass that asks for scopes or contexts of the same module
    (the reducer's current best) gets them computed once. Its nodes are the module's own (no copy)."""

    return MetadataWrapper(module, unsafe_skip_copy=True)


_RENDERED: collections.OrderedDict[int, tuple[cst.Module, str]] = collections.OrderedDict()
_RENDERED_LOCK = threading.Lock()


def render(module: cst.Module) -> str:
    """The module's code, remembered for the last few modules (by identity; the entry keeps its module alive):
    a candidate's text is wanted when it is proposed, by the scheduler, the tester and the size measure."""

    with _RENDERED_LOCK:
        hit = _RENDERED.get(id(module))
        if hit is not None and hit[0] is module:
            _RENDERED.move_to_end(id(module))
            return hit[1]
    code = code_of(module, module)
    _remember_code(module, code)
    return code


def code_of(module: cst.Module, node: cst.CSTNode) -> str:
    """``module.code_for_node(node)``, the same text, with the code of every statement remembered.

    A candidate shares all its statements but the edited ones with the module it came from (the edit rebuilds
    only the path to its target), so rendering it generates only that path's code. Statements are remembered by
    identity (the entry keeps the node alive) and by the indentation they were generated at.
    """

    state = _StatementCachingState(default_indent=module.default_indent, default_newline=module.default_newline)
    node._codegen(state)
    return "".join(state.tokens)


class _StatementCachingState(CodegenState):
    """The codegen state of `code_of`; libcst's own renders (``module.code``, positions) use theirs, uncached."""


_STATEMENT_TOKENS: collections.OrderedDict[tuple, tuple[cst.CSTNode, list[str]]] = collections.OrderedDict()
_STATEMENT_TOKENS_KEPT = 50_000
_STATEMENT_TOKENS_LOCK = threading.Lock()


def _statement_codegen(self: cst.BaseStatement, state: CodegenState, **kwargs) -> None:
    if type(state) is not _StatementCachingState or kwargs:
        cst.CSTNode._codegen(self, state, **kwargs)
        return
    key = (id(self), tuple(state.indent_tokens), state.default_indent, state.default_newline)
    with _STATEMENT_TOKENS_LOCK:
        hit = _STATEMENT_TOKENS.get(key)
        if hit is not None and hit[0] is self:
            _STATEMENT_TOKENS.move_to_end(key)
            state.tokens.extend(hit[1])
            return
    start = len(state.tokens)
    cst.CSTNode._codegen(self, state)
    with _STATEMENT_TOKENS_LOCK:
        _STATEMENT_TOKENS[key] = (self, state.tokens[start:])
        while len(_STATEMENT_TOKENS) > _STATEMENT_TOKENS_KEPT:
            _STATEMENT_TOKENS.popitem(last=False)


# Every statement class inherits ``_codegen`` from here (none overrides it); other states pass straight through.
cst.BaseStatement._codegen = _statement_codegen  # type: ignore[method-assign]


def _remember_code(module: cst.Module, code: str) -> None:
    with _RENDERED_LOCK:
        _RENDERED[id(module)] = (module, code)
        _RENDERED.move_to_end(id(module))
        while len(_RENDERED) > 128:
            _RENDERED.popitem(last=False)


def _parse_if_compiles(code: str) -> Optional[cst.Module]:
    if not _byte_compiles(code):
        return None
    try:
        return cst.parse_module(code)
    except cst.ParserSyntaxError:
        return None


def distinct_candidates(
    original: cst.Module, candidates: Iterable[Optional[cst.Module] | Callable[[], cst.Module]]
) -> "CandidateStream":
    """Filter a stream of candidate modules for `original`, lazily (see `CandidateStream`).

    Items are modules, None (an edit `try_build` refused), or builders: zero-argument functions that build the
    candidate, called (through `try_build`) only if the stream gets to it, so that resuming a pass part-way
    through costs nothing for what it skips. A builder is called before the next item is drawn, so a lambda may
    read the loop variables of the generator that yields it.
    """
    return CandidateStream(original, candidates)


class CandidateStream(Iterator[cst.Module]):
    """A pass's candidates for `original` without the ones not worth asking: refused edits (None), those whose
    code equals the original's or an earlier candidate's, that have more tokens than the original
    (`code_size`), or that CPython does not compile.

    Survivors are yielded as built, not re-parsed (most are only rendered and run): one that a pass is to analyse
    goes through `settled` first. ``position`` is the index, among all items the pass produced, of the last one
    yielded; ``skip(n)`` drops the next n items unbuilt and unrendered, so the reducer resumes a pass where it
    was without paying for the proposals before.
    """

    def __init__(self, original: cst.Module, items: Iterable) -> None:
        self._original = original
        self._items = iter(items)
        self._drawn = 0
        self._seen: set[str] | None = None
        self._limit = 0
        self.position = -1

    def skip(self, count: int) -> None:
        for _ in range(count):
            if next(self._items, _END) is _END:
                return
            self._drawn += 1

    def __next__(self) -> cst.Module:
        if self._seen is None:
            self._seen, self._limit = {render(self._original)}, code_size(self._original)
        while True:
            item = next(self._items)
            self._drawn += 1
            candidate = try_build(item) if callable(item) else item
            if candidate is None:
                continue
            code = render(candidate)
            if code in self._seen:
                continue
            self._seen.add(code)
            if code_size(code) > self._limit or not _byte_compiles(code):
                continue
            self.position = self._drawn - 1
            return candidate


_END = object()


def _byte_compiles(code: str) -> bool:
    try:
        compile(code, "<candidate>", "exec", dont_inherit=True)
        return True
    except (SyntaxError, ValueError):
        return False


_SETTLED: collections.OrderedDict[str, cst.Module] = collections.OrderedDict()


def settled(module: cst.Module) -> cst.Module:
    """`module` re-parsed from its code: every node fresh and in one place only (an edit may have put one node
    in two places, and passes find and replace nodes by identity), the code known to round-trip.

    Remembered by code for the last few modules, so that a candidate settled when speculation analyses it is the
    same object when the reducer takes it, and per-module analyses (`metadata`) are not repeated.
    """
    code = render(module)
    with _RENDERED_LOCK:
        hit = _SETTLED.get(code)
        if hit is not None:
            _SETTLED.move_to_end(code)
            return hit
    try:
        fresh = cst.parse_module(code)
    except cst.ParserSyntaxError:
        return module  # CPython compiles what libcst cannot parse back: keep the tree as built
    _remember_code(fresh, code)
    with _RENDERED_LOCK:
        _SETTLED[code] = fresh
        while len(_SETTLED) > 64:
            _SETTLED.popitem(last=False)
    return fresh


def replace_node(module: cst.Module, target: cst.CSTNode, new_node: Replacement) -> cst.Module:
    """Return `module` with the node that *is* `target` replaced by `new_node` (or removed by a sentinel).

    Removal leaves bodies non-empty and drops statements that lose all their names; see `replace_nodes`.
    """
    return replace_nodes(module, {target: new_node})


def replace_nodes(module: cst.Module, replacements: Mapping[cst.CSTNode, Replacement]) -> cst.Module:
    """Return `module` with several nodes replaced at once; keys are nodes of `module` (libcst nodes hash by
    identity), values are new nodes or `cst.RemovalSentinel.REMOVE`.

    After removals: an emptied block gets `pass`, an emptied `import` disappears, a trailing comma or semicolon
    left behind is dropped, a tuple that shrank to one element keeps its comma.
    """
    return module.visit(_Replacer(replacements))


def remove_node(module: cst.Module, target: cst.CSTNode) -> cst.Module:
    """Return `module` without `target`: a statement, a small statement of `a; b`, an argument, an import alias,
    a list element, ...

    A block that becomes empty gets `pass`; an import that loses all its names disappears.
    """
    return replace_node(module, target, cst.RemovalSentinel.REMOVE)


def remove_nodes(module: cst.Module, targets: Iterable[cst.CSTNode]) -> cst.Module:
    """Return `module` without any of `targets` (see `remove_node`)."""
    return replace_nodes(module, {t: cst.RemovalSentinel.REMOVE for t in targets})


class _Swapper(cst.CSTTransformer):
    def __init__(self, mapping: Mapping[cst.CSTNode, cst.CSTNode]) -> None:
        self.mapping = mapping

    def on_leave(self, original_node, updated_node):
        return self.mapping.get(original_node, updated_node)


def swap_nodes(node: NodeT, mapping: Mapping[cst.CSTNode, cst.CSTNode]) -> NodeT:
    """`node` (any node, not only a module) with the nodes that are keys of `mapping` (by identity) swapped for
    their values, without the removal repairs of `replace_nodes`."""

    return node.visit(_Swapper(mapping)) if mapping else node  # type: ignore[return-value]


_NUMBER = m.Integer() | m.Float() | m.Imaginary()
_LITERAL = (
    _NUMBER | m.UnaryOperation(expression=_NUMBER) | m.SimpleString() | m.ConcatenatedString() | m.FormattedString()
    | m.Name("None") | m.Name("True") | m.Name("False") | m.Ellipsis()
)
# Tuples and lists of plain values (`(2, 3)`) are shapes, not tensors.
_LITERAL_COLLECTION = m.Tuple() | m.List() | m.Dict() | m.Set()


def is_literal(node: cst.BaseExpression) -> bool:
    """Whether ``node`` is a plain value written out: a number, string, True/False/None, or a collection of them."""

    if m.matches(node, _LITERAL):
        return True
    if m.matches(node, _LITERAL_COLLECTION):
        return all(is_literal(element.value) for element in getattr(node, "elements", ()) if hasattr(element, "value"))
    return False


# `torch.compile` as the script spells it (`torch.compile(f)`, `@torch.compile`), and a call of it.
TORCH_COMPILE = m.Attribute(value=m.Name("torch"), attr=m.Name("compile"))
TORCH_COMPILE_CALL = m.Call(func=TORCH_COMPILE)

# A statement that is only a string: a docstring.
DOCSTRING_LINE = m.SimpleStatementLine(body=[m.Expr(value=m.SimpleString() | m.ConcatenatedString())])

# Expressions with a scope of their own: a lambda's parameters, a comprehension's targets are bound inside.
BINDS_NAMES = m.Lambda() | m.GeneratorExp() | m.ListComp() | m.DictComp() | m.SetComp()


def bind_names(expression: NodeT, values: Mapping[str, cst.BaseExpression]) -> NodeT | None:
    """`expression` with every name in `values` replaced by its value (parameters bound to arguments or
    defaults); None when the expression binds names of its own (a lambda's parameters, a comprehension's
    targets) that a replaced name or a name in a value shares, since the replacement could land under that
    binding: `[model(b) for b in batches]` binds `batches` to `data` and `model` to `opt`, not `b` to anything."""

    found = {node: values[node.value] for node in variable_names(expression) if node.value in values}
    if found and m.findall(expression, BINDS_NAMES):
        bound = _names_bound_inside(expression)
        used = {name.value for value in found.values() for name in variable_names(value)}
        if bound & (used | {node.value for node in found}):
            return None
    return swap_nodes(expression, found)


def _names_bound_inside(expression: cst.CSTNode) -> set[str]:
    """The names a lambda or comprehension inside ``expression`` binds: its parameters, its loop targets."""

    names: set[str] = set()
    for comp_for in m.findall(expression, m.CompFor()):
        names |= {name.value for name in m.findall(comp_for.target, m.Name())}  # type: ignore[attr-defined]
    for lam in m.findall(expression, m.Lambda()):
        names |= {param.name.value for param in m.findall(lam.params, m.Param())}  # type: ignore[attr-defined]
    return names


def variable_names(node: cst.CSTNode) -> list[cst.Name]:
    """The names in ``node`` that are variables: not the attribute of ``x.attr`` nor the keyword of ``f(k=v)``."""

    not_variables = {a.attr for a in m.findall(node, m.Attribute())} | {
        a.keyword for a in m.findall(node, m.Arg(keyword=m.Name()))  # type: ignore[union-attr]
    }
    return [name for name in m.findall(node, m.Name()) if name not in not_variables]  # type: ignore[misc]


# Arguments that read the same wherever they are written: a parameter bound to one may be read any number of times.
PLAIN_VALUE = m.Name() | m.Integer() | m.Float() | m.SimpleString()
_ATOM = (
    m.Name() | m.Attribute() | m.Call() | m.Subscript() | m.Integer() | m.Float() | m.Imaginary() | m.SimpleString()
    | m.List() | m.Dict()
)


def as_operand(value: cst.BaseExpression) -> cst.BaseExpression:
    """``value``, in parentheses unless it is an atom, so it can stand for a name in any expression."""

    if m.matches(value, _ATOM) or value.lpar:
        return value
    return value.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def bound_arguments(
    args: Iterable[cst.Arg], params: list[cst.Param], keyword_only: list[cst.Param], body: cst.CSTNode
) -> Optional[dict[str, cst.BaseExpression]]:
    """Each parameter's value at a call with ``args``: its argument (by position or keyword), else its default,
    as an operand (see ``as_operand``); None when a parameter has neither, an argument is starred or names no
    parameter, or an argument other than a name or a literal would be computed more than once (its parameter is
    read more than once in ``body``)."""

    args = list(args)
    if any(arg.star for arg in args):
        return None
    positional = [arg.value for arg in args if arg.keyword is None]
    keywords = {arg.keyword.value: arg.value for arg in args if arg.keyword is not None}
    if len(positional) > len(params):
        return None
    values: dict[str, cst.BaseExpression] = {}
    for i, param in enumerate([*params, *keyword_only]):
        name = param.name.value
        value = positional[i] if i < len(positional) else keywords.pop(name, param.default)
        if value is None:
            return None
        if not m.matches(value, PLAIN_VALUE) and len(m.findall(body, m.Name(name))) > 1:
            return None
        values[name] = as_operand(value)
    return None if keywords else values


def assigned_name(line: cst.CSTNode) -> str | None:
    """``x`` for a line ``x = ...`` (one target, a plain name), else ``None``."""

    one = m.SimpleStatementLine(body=[m.Assign(targets=[m.AssignTarget(target=m.Name())])])
    return line.body[0].targets[0].target.value if m.matches(line, one) else None  # type: ignore[attr-defined]


def target_names(target: cst.BaseExpression) -> set[str]:
    """The plain names an assignment target binds: `x`, or the names among `a, b` / `[a, b]`."""

    parts = [e.value for e in target.elements] if isinstance(target, (cst.Tuple, cst.List)) else [target]
    return {part.value for part in parts if isinstance(part, cst.Name)}


def binds_locally(scope, name: str) -> bool:
    """Whether `name` seen from `scope` may resolve to something other than a module-level binding or builtin."""

    while scope is not None and not isinstance(scope, GlobalScope):
        if scope.assignments[name]:
            return True
        scope = scope.parent
    return False


def try_build(build: Callable[[], cst.Module]) -> Optional[cst.Module]:
    """Call `build()` and return its module, or None when libcst refuses the edit (a node placed where it is
    not allowed, a removal the parent cannot absorb). Passes use it so that generation never raises.
    """
    try:
        return build()
    except (cst.CSTValidationError, cst.CSTLogicError, TypeError, ValueError):
        return None


# Expressions that can stand anywhere an operand can without parentheses. (Not numbers: `(1).real` needs them.)
_ATOM_WITHOUT_PARENTHESES = (
    m.Name() | m.Attribute() | m.Call() | m.Subscript() | m.SimpleString() | m.ConcatenatedString()
    | m.FormattedString() | m.List() | m.Dict() | m.Set() | m.ListComp() | m.SetComp() | m.DictComp() | m.Ellipsis()
)


# Where any expression stands without parentheses: an assignment's value, a return, an argument, an element.
_HOLDS_ANY_EXPRESSION = (cst.Assign, cst.AnnAssign, cst.AugAssign, cst.Return, cst.Arg, cst.Element, cst.Expr, cst.Index)


def substitute_under(
    parent: cst.CSTNode | None, original: cst.BaseExpression, replacement: cst.BaseExpression
) -> cst.BaseExpression:
    """``substitute_expression``, but bare where ``parent`` (``original``'s) holds any expression and
    ``original`` had no parentheses of its own: ``y = x * 2``, not ``y = (x * 2)``."""

    if isinstance(parent, _HOLDS_ANY_EXPRESSION) and not original.lpar:
        return replacement
    return substitute_expression(original, replacement)


def substitute_expression(original: cst.BaseExpression, replacement: cst.BaseExpression) -> cst.BaseExpression:
    """Return `replacement` made safe to stand where `original` stood.

    An atomic replacement (name, attribute, call, subscript, display) needs no parentheses and gets none of
    `original`'s. A non-atomic one (`a + b`, `x if c else y`, a generator) keeps its own, else inherits
    `original`'s, else gets new ones, because the surrounding operator may bind tighter than it does.
    """
    if m.matches(replacement, _ATOM_WITHOUT_PARENTHESES):
        return replacement.with_changes(lpar=[], rpar=[])
    if replacement.lpar:
        return replacement
    if original.lpar:
        return replacement.with_changes(lpar=original.lpar, rpar=original.rpar)
    return replacement.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])


def _pass_line() -> cst.SimpleStatementLine:
    return cst.SimpleStatementLine(body=[cst.Pass()])


def _drop_trailing_comma(elements: tuple) -> tuple:
    # A removed last element leaves `f(a, )`; valid, but one token larger than needed.
    if not elements or not hasattr(elements[-1], "comma"):
        return elements
    last = elements[-1]
    if isinstance(last.comma, cst.Comma):
        last = last.with_changes(comma=cst.MaybeSentinel.DEFAULT)
    return (*elements[:-1], last)


def _is_sequence(value) -> bool:
    return isinstance(value, (tuple, list))


_IMPORT_WITH_NAMES = m.Import() | m.ImportFrom(names=m.MatchIfTrue(_is_sequence))


def _drop_trailing_semicolon(body: tuple) -> tuple:
    if body and isinstance(getattr(body[-1], "semicolon", None), cst.Semicolon):
        return (*body[:-1], body[-1].with_changes(semicolon=cst.MaybeSentinel.DEFAULT))
    return body


class RemovalRepairingTransformer(cst.CSTTransformer):
    """A transformer base that repairs what removing statements or elements breaks in the enclosing nodes.

    Subclass it and return `cst.RemovalSentinel.REMOVE` freely: emptied blocks get `pass`, emptied simple
    statement lines vanish, trailing commas and semicolons left behind are dropped. (Removing an import alias
    needs `replace_nodes`, because imports refuse a trailing comma at construction time.) A subclass that defines
    its own `leave_IndentedBlock`, `leave_SimpleStatementSuite`, `leave_SimpleStatementLine`, `leave_Call`,
    `leave_List` or `leave_Tuple` must call `super()` on the result.
    """

    # A body-holding node whose statements were all removed must keep `pass`.
    def leave_IndentedBlock(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[_pass_line()])
        return updated_node

    def leave_SimpleStatementSuite(self, original_node, updated_node):
        if not updated_node.body:
            return updated_node.with_changes(body=[cst.Pass()])
        if len(updated_node.body) != len(original_node.body):
            return updated_node.with_changes(body=_drop_trailing_semicolon(updated_node.body))
        return updated_node

    def leave_SimpleStatementLine(self, original_node, updated_node):
        if not updated_node.body:
            return cst.RemovalSentinel.REMOVE
        if len(updated_node.body) != len(original_node.body):
            return updated_node.with_changes(body=_drop_trailing_semicolon(updated_node.body))
        return updated_node

    def leave_Call(self, original_node, updated_node):
        if len(updated_node.args) != len(original_node.args):
            return updated_node.with_changes(args=_drop_trailing_comma(updated_node.args))
        return updated_node

    def leave_List(self, original_node, updated_node):
        if len(updated_node.elements) != len(original_node.elements):
            return updated_node.with_changes(elements=_drop_trailing_comma(updated_node.elements))
        return updated_node

    def leave_Tuple(self, original_node, updated_node):
        # A one-element tuple needs its comma; an emptied tuple needs its parentheses.
        if not updated_node.elements:
            return updated_node.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        if len(updated_node.elements) == 1 and len(original_node.elements) != 1:
            only = updated_node.elements[0]
            return updated_node.with_changes(elements=[only.with_changes(comma=cst.Comma())])
        return updated_node


def _ancestors(root: cst.Module, targets: Iterable[cst.CSTNode]) -> set[cst.CSTNode]:
    """The nodes on the paths from `root` down to any of `targets` (targets excluded)."""
    parents = parent_map(root)
    found: set[cst.CSTNode] = set()
    for target in targets:
        node = parents.get(target)
        while node is not None and node not in found:
            found.add(node)
            node = parents.get(node)
    return found


class _Replacer(RemovalRepairingTransformer):
    """Swap nodes by identity, then let the base class repair the enclosing nodes."""

    def __init__(self, replacements: Mapping[cst.CSTNode, Replacement]) -> None:
        super().__init__()
        self._replacements = dict(replacements)
        self._paths: set[cst.CSTNode] = set()

    def on_visit(self, node):
        if isinstance(node, cst.Module):
            self._paths = _ancestors(node, self._replacements)
        if node in self._replacements:
            return False  # replaced whole; its children do not matter
        if node not in self._paths:
            return False  # no target below: keep the subtree as it is, without rebuilding it
        # Import nodes validate on construction (no trailing comma, at least one name), so a removed alias must
        # be handled by rebuilding the whole import before its children are visited.
        if node not in self._replacements and m.matches(node, _IMPORT_WITH_NAMES):
            names = node.names
            kept = [self._replacements.get(alias, alias) for alias in names]
            kept = [alias for alias in kept if isinstance(alias, cst.ImportAlias)]
            if len(kept) != len(names):
                fixed = node.with_changes(names=_drop_trailing_comma(tuple(kept))) if kept else cst.RemovalSentinel.REMOVE
                self._replacements[node] = fixed
                return False
        return super().on_visit(node)

    def on_leave(self, original_node, updated_node):
        if original_node in self._replacements:
            return self._replacements[original_node]
        return super().on_leave(original_node, updated_node)
