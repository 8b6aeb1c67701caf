"""Drop a returned value nobody reads: `return target, info` with `_, info = step(x)` returns `info` alone.

Functions return tuples out of habit (`loss, logits, aux = model(batch)`); once the repro reads one of them,
the others are still computed, returned and unpacked. Removing the unpacked name alone breaks the unpacking and
removing the returned value alone does too; this pass removes both at once. A tuple its callers only pass on whole
(compared with ``assert_close``, printed) may return one of its values instead: the one the check fails on.
Likewise a function that returns a
dict of results (`return {"loss": loss, "attached": t.requires_grad}`) read at its one key
(`step(x)["attached"]`) returns that value alone.
"""

from __future__ import annotations

from typing import Iterator

import libcst as cst
import libcst.matchers as m
from libcst.metadata import ScopeProvider

from minimizer.source.passes.candidates import distinct_candidates
from minimizer.source.passes.edit import replace_nodes
from minimizer.source.passes.items.unpacked import without_item
from minimizer.source.passes.scopes import metadata
from minimizer.source.patterns import TORCH_COMPILE
from minimizer.source.traversal import find_all

__all__ = ["drop_unread_returned_values", "return_one_of_the_values", "return_the_element_read"]


def drop_unread_returned_values(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one position of one function's returned tuple dropped, with the name each call site
    unpacks there, in source order.

    Only for a module-level function bound once whose every `return` gives a tuple of the same length, whose every
    use is a call (`f(x)`, or `torch.compile(f)(x)`) unpacked into as many plain names, and only where no call
    site's name at that position is read. Two values become one (`return a`, `a = f(x)`).
    """

    return distinct_candidates(module, _drops(module))


def _drops(module: cst.Module) -> Iterator[cst.Module | None]:
    scopes = metadata(module).resolve(ScopeProvider)
    top = scopes[module]
    for function in module.body:
        if not isinstance(function, cst.FunctionDef) or len(top.assignments[function.name.value]) != 1:
            continue
        returns = [r for r in find_all(function.body, m.Return()) if _own_return(function, r)]
        lengths = {len(r.value.elements) if isinstance(r.value, cst.Tuple) else -1 for r in returns}
        if len(lengths) != 1 or min(lengths) < 2:
            continue
        width = lengths.pop()
        sites = _unpacking_sites(module, function.name.value, width, top)
        if sites is None:
            continue
        for position in range(width):
            targets = [assign.targets[0].target.elements[position].value for assign in sites]
            if any(_is_read(target, scopes) for target in targets):
                continue
            yield lambda position=position, sites=sites: _drop(module, returns, sites, position)


def return_one_of_the_values(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with one module-level function's returned tuple (or dict display) replaced by one of its
    values, for each position in turn, where every `return` gives one of the same length and no call unpacks or
    indexes the result (`torch.testing.assert_close(f(x), g(x))` compares them whole: the check fails on one
    value; `{"attached": t.requires_grad}` is `t.requires_grad` compared)."""

    return distinct_candidates(module, _single_values(module))


def _single_values(module: cst.Module) -> Iterator[cst.Module | None]:
    for function in module.body:
        if not isinstance(function, cst.FunctionDef):
            continue
        returns = [r for r in find_all(function.body, m.Return()) if _own_return(function, r)]
        widths = {_width(r.value) for r in returns}
        if len(widths) != 1 or min(widths) < 1 or (min(widths) < 2 and not isinstance(returns[0].value, cst.Dict)):
            continue
        name = function.name.value
        taken_apart = m.Assign(targets=[m.AssignTarget(target=m.Tuple() | m.List())], value=_call_of(name))
        if find_all(module, taken_apart) or find_all(module, m.Subscript(value=_call_of(name))):
            continue
        for position in range(widths.pop()):
            yield lambda position=position, returns=returns: replace_nodes(
                module, {r.value: r.value.elements[position].value for r in returns}
            )


def _width(value: cst.BaseExpression | None) -> int:
    """How many values a returned tuple, or dict display of plain entries, holds; -1 for anything else."""

    if isinstance(value, cst.Tuple):
        return len(value.elements)
    if isinstance(value, cst.Dict) and all(isinstance(e, cst.DictElement) for e in value.elements):
        return len(value.elements)
    return -1


def _own_return(function: cst.FunctionDef, node: cst.Return) -> bool:
    """Whether `node` returns from `function`, not from a function or lambda nested in it."""

    nested = find_all(function.body, m.FunctionDef())
    return not any(node in find_all(inner, m.Return()) for inner in nested)


def _unpacking_sites(module: cst.Module, name: str, width: int, top) -> list[cst.Assign] | None:
    """The assignments `a, b = name(...)` (or `= torch.compile(name)(...)`), if every use of `name` is one."""

    uses = [access.node for assignment in top.assignments[name] for access in assignment.references]
    unpacking = m.Assign(targets=[m.AssignTarget(target=m.Tuple())], value=_call_of(name))
    sites = find_all(module, unpacking)
    if len(sites) != len(uses) or not sites:
        return None
    for assign in sites:
        elements = assign.targets[0].target.elements
        if len(elements) != width or not all(isinstance(e, cst.Element) and isinstance(e.value, cst.Name) for e in elements):
            return None
    return sites


def _call_of(name: str) -> m.Call:
    """A call of the function ``name``, or of ``torch.compile(name, ...)`` (its options after it)."""

    compiled = m.Call(func=TORCH_COMPILE, args=[m.Arg(value=m.Name(name), keyword=None), m.ZeroOrMore(m.Arg(keyword=m.Name()))])
    return m.Call(func=m.Name(name) | compiled)


def _called_name(call: cst.Call) -> cst.CSTNode:
    """The function's name in a call that ``_call_of`` matched."""

    return call.func if isinstance(call.func, cst.Name) else call.func.args[0].value  # type: ignore[attr-defined]


def _is_read(target: cst.Name, scopes) -> bool:
    scope = scopes.get(target)
    if scope is None:
        return True
    return any(assignment.node is target and assignment.references for assignment in scope.assignments[target.value])


def _drop(module: cst.Module, returns: list[cst.Return], sites: list[cst.Assign], position: int) -> cst.Module:
    replacements: dict = {}
    for node in returns:
        replacements[node.value] = without_item(node.value, position)
    for assign in sites:
        target = assign.targets[0].target
        replacements[target] = without_item(target, position)
    return replace_nodes(module, replacements)


def return_the_element_read(module: cst.Module) -> Iterator[cst.Module]:
    """Yield `module` with a function that returns a literal dict, tuple or list returning the one element its
    callers read, and their subscripts gone: `return {"a": x, "b": y}` with `f(z)["b"]` -> `return y`, `f(z)`.

    Only for a module-level function bound once whose every `return` gives such a literal holding that key (a
    string or an integer, the same at every call site), and whose every use is a call (`f(x)`, or
    `torch.compile(f)(x)`) subscripted at once.
    """

    return distinct_candidates(module, _element_reads(module))


def _element_reads(module: cst.Module) -> Iterator[cst.Module | None]:
    top = metadata(module).resolve(ScopeProvider)[module]
    for function in module.body:
        if not isinstance(function, cst.FunctionDef) or len(top.assignments[function.name.value]) != 1:
            continue
        name = function.name.value
        returns = [r for r in find_all(function.body, m.Return()) if _own_return(function, r)]
        uses = [access.node for assignment in top.assignments[name] for access in assignment.references]
        subscripts = find_all(module, m.Subscript(value=_call_of(name), slice=[m.SubscriptElement()]))
        if not returns or not uses or {id(u) for u in uses} != {id(_called_name(s.value)) for s in subscripts}:
            continue  # a use that is not a call read at once
        keys = {_literal_key(s) for s in subscripts}
        if len(keys) != 1 or None in keys:
            continue
        key = keys.pop()
        elements = [_element(r.value, key) for r in returns]  # type: ignore[arg-type]
        if None in elements:
            continue
        replacements: dict = {r.value: element for r, element in zip(returns, elements)}
        replacements.update({s: s.value for s in subscripts})
        yield lambda replacements=replacements: replace_nodes(module, replacements)


def _literal_key(subscript: cst.Subscript) -> str | int | None:
    index = subscript.slice[0].slice
    if not isinstance(index, cst.Index):
        return None
    value = index.value
    if isinstance(value, cst.SimpleString):
        return value.evaluated_value  # type: ignore[return-value]
    if isinstance(value, cst.Integer):
        return int(value.value, 0)
    return None


def _element(value: cst.BaseExpression | None, key: str | int) -> cst.BaseExpression | None:
    """The element at ``key`` of a literal dict (string keys), tuple or list without starred elements."""

    if isinstance(value, cst.Dict) and isinstance(key, str):
        found = [
            e.value
            for e in value.elements
            if isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) and e.key.evaluated_value == key
        ]
        plain = all(isinstance(e, cst.DictElement) and isinstance(e.key, cst.SimpleString) for e in value.elements)
        return found[-1] if found and plain else None
    if isinstance(value, (cst.Tuple, cst.List)) and isinstance(key, int):
        if any(not isinstance(e, cst.Element) for e in value.elements) or not -len(value.elements) <= key < len(value.elements):
            return None
        return value.elements[key].value
    return None
