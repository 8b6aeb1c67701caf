"""Shrink subscripts: drop an index of `S[0, 1]`, drop a bound or the step of a slice `x[1:5:2]`.

Indexing is where many shape and aliasing bugs live, so the repro keeps a subscript but rarely needs all of it:
`S[0, 1] = v[2]` often reproduces as `S[0] = v[2]`, and `x[1:5]` as `x[1:]`.
"""

from __future__ import annotations

from typing import Iterator, Optional, Sequence

import libcst as cst
import libcst.matchers as m

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_node
from minimizer.source.traversal import find_all

__all__ = ["shrink_subscripts"]


def shrink_subscripts(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one subscript made smaller, subscripts outer first in source order.

    Per subscript: each index element dropped, last first (only when there are several); then per slice element,
    its step dropped (`x[a:b:c]` -> `x[a:b]`), its upper bound (`x[a:b]` -> `x[a:]`), its lower bound (`x[:b]`).
    A slice never becomes a plain index (`x[a:b]` -> `x[a]` would change the rank); a subscript of whole slices
    (`x[:]`) becomes its value; a dict display read at a literal key, the value there; and last, a subscript that
    is read (not stored into) becomes its value.
    Subscripts inside type annotations are left alone.
    """
    return distinct_candidates(module, _shrinkings(module))


def _shrinkings(module: cst.Module) -> Iterator[Optional[cst.Module]]:
    annotated = {node for annotation in find_all(module, m.Annotation()) for node in m.findall(annotation, m.Subscript())}
    stored = {
        target.target
        for target in [*find_all(module, m.AssignTarget()), *find_all(module, m.AugAssign()), *find_all(module, m.AnnAssign())]
    }
    for subscript in find_all(module, m.Subscript()):
        if subscript in annotated:
            continue
        if _whole_slice(subscript):
            # `x[:]` (`x[:, :]`) is `x` to every reader but an aliasing test: a whole slice goes at once.
            yield lambda: replace_node(module, subscript, subscript.value)
            continue
        for elements in _smaller_element_lists(subscript.slice):
            yield lambda: replace_node(module, subscript, subscript.with_changes(slice=elements))
        if subscript not in stored and (entry := _entry_read(subscript)) is not None:
            # `{"max_abs": err}["max_abs"]` -> `err`: a dict of metrics down to the one value the check reads.
            yield lambda entry=entry: replace_node(module, subscript, entry)
        if subscript not in stored:
            # `compiled[finite]` -> `compiled`: a mask or a selection the bug does not need, read whole.
            yield lambda: replace_node(module, subscript, subscript.value)


def _entry_read(subscript: cst.Subscript) -> cst.BaseExpression | None:
    """The value a dict display holds at the literal key its subscript reads, or ``None``."""

    if not isinstance(subscript.value, cst.Dict) or len(subscript.slice) != 1:
        return None
    index = subscript.slice[0].slice
    if not isinstance(index, cst.Index) or not isinstance(index.value, (cst.SimpleString, cst.Integer)):
        return None
    wanted = index.value.evaluated_value
    found = [e.value for e in subscript.value.elements if isinstance(e, cst.DictElement)
             and isinstance(e.key, (cst.SimpleString, cst.Integer)) and e.key.evaluated_value == wanted]
    return found[0] if len(found) == 1 else None


def _whole_slice(subscript: cst.Subscript) -> bool:
    return all(
        m.matches(element.slice, m.Slice(lower=None, upper=None, step=None)) for element in subscript.slice
    )


def _smaller_element_lists(elements: Sequence[cst.SubscriptElement]) -> Iterator[list[cst.SubscriptElement]]:
    if len(elements) > 1:
        for index in reversed(range(len(elements))):
            yield _without_trailing_comma([*elements[:index], *elements[index + 1 :]])
    for index, element in enumerate(elements):
        if isinstance(element.slice, cst.Slice):
            for smaller in _smaller_slices(element.slice):
                yield [*elements[:index], element.with_changes(slice=smaller), *elements[index + 1 :]]


def _smaller_slices(piece: cst.Slice) -> Iterator[cst.Slice]:
    if piece.step is not None:
        yield piece.with_changes(step=None, second_colon=cst.MaybeSentinel.DEFAULT)
    if piece.upper is not None:
        yield piece.with_changes(upper=None)
    if piece.lower is not None:
        yield piece.with_changes(lower=None)


def _without_trailing_comma(elements: list[cst.SubscriptElement]) -> list[cst.SubscriptElement]:
    # `S[0, 1]` minus `1` must read `S[0]`, not `S[0, ]` (a one-element tuple index).
    last = elements[-1]
    return [*elements[:-1], last.with_changes(comma=cst.MaybeSentinel.DEFAULT)]
