"""A pass's candidates, filtered lazily: what does not build, repeats, grows or does not compile never reaches the
oracle.

Every pass builds candidates the same way: find nodes in the current module, produce a new module with one of
them replaced or removed (`minimizer.source.passes.edit`), and let `distinct_candidates` throw away what does not
parse, repeats, or grows.
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator, Optional

import libcst as cst

from minimizer.source.rendering import code_size, render

__all__ = ["CandidateStream", "compiles", "distinct_candidates", "try_build"]


def compiles(code: str) -> bool:
    """Return True when `code` parses with libcst and byte-compiles with CPython.

    libcst accepts some programs CPython rejects (`return` at module level, a `break` outside a loop), and a
    candidate the interpreter rejects only wastes an oracle call.
    """
    return _parse_if_compiles(code) is not None


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


def try_build(build: Callable[[], cst.Module]) -> Optional[cst.Module]:
    """Call `build()` and return its module, or None when libcst refuses the edit (a node placed where it is
    not allowed, a removal the parent cannot absorb). Passes use it so that generation never raises.
    """
    try:
        return build()
    except (cst.CSTValidationError, cst.CSTLogicError, TypeError, ValueError):
        return None
