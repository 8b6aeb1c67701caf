"""A module's code, rendered once and remembered: the text a candidate is proposed, measured and compared by.

A candidate shares all its statements but the edited ones with the module it came from (an edit rebuilds only
the path to its target), so `code_of` remembers every statement's tokens and generates only that path's code;
`render` remembers whole modules, `settled` parses a module back from its code once per code, and `code_size`
counts the tokens, the measure the reduction minimizes.
"""

from __future__ import annotations

import collections
import threading
import tokenize

import libcst as cst
from libcst._nodes.internal import CodegenState

from minimizer.metrics import count_tokens

__all__ = ["code_of", "code_size", "render", "settled"]


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
